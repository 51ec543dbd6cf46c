package sandbox_test

import (
	"os"
	"testing"

	"github.com/procgraph/procgraph/sandbox"
)

// TestMain makes the test binary a sandbox worker when the pool starts it,
// or one of the misbehaving workers of hostile_worker_test.go when asked.
func TestMain(m *testing.M) {
	if sandbox.IsWorker() && os.Getenv(fakeWorkerEnv) != "" {
		os.Exit(runFakeWorker(os.Getenv(fakeWorkerEnv)))
	}
	sandbox.ExitIfWorker()
	os.Exit(m.Run())
}
