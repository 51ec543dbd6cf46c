// Package sandboxtest helps the tests of packages that replay in real
// sandbox worker processes.
package sandboxtest

import (
	"fmt"
	"os"
	"testing"

	"github.com/procgraph/procgraph/sandbox"
)

// Main is a TestMain body: when the pool started this test binary as a
// worker it serves as one; otherwise it starts a pool of workers (this test
// binary re-executed) into *pool, runs the tests, closes the pool and
// returns the exit code.
func Main(m *testing.M, cfg sandbox.PoolConfig, pool **sandbox.Pool) int {
	if sandbox.IsWorker() {
		return sandbox.RunWorker()
	}
	p, err := sandbox.NewPool(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox pool:", err)
		return 1
	}
	*pool = p
	defer p.Close()
	return m.Run()
}
