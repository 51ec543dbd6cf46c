package sandbox_test

import (
	"os"
	"testing"

	"github.com/procgraph/procgraph/sandbox"
)

// TestMain makes the test binary a sandbox worker when the pool starts it.
func TestMain(m *testing.M) {
	sandbox.ExitIfWorker()
	os.Exit(m.Run())
}
