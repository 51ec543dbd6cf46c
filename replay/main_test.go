package replay_test

import (
	"os"
	"testing"

	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
	"github.com/procgraph/procgraph/sandbox/sandboxtest"
)

// pool is the worker pool shared by the tests: this test binary re-executed
// as a sandbox worker.
var pool *sandbox.Pool

// TestMain makes the test binary a sandbox worker when the pool starts it.
func TestMain(m *testing.M) {
	os.Exit(sandboxtest.Main(m, sandbox.PoolConfig{Size: 2, MaxWorkers: 12}, &pool))
}

// runners are the sandbox runners a test table runs under.
func runners() []struct {
	name string
	r    sandbox.Runner
} {
	return []struct {
		name string
		r    sandbox.Runner
	}{{"inprocess", sandbox.NewInProcess()}, {"pool", pool}}
}

// env is one test's world: replaytest.Env (a real embedded store, the
// service over it, a replayer and its recording upstream).
type env struct{ *replaytest.Env }

func newEnv(t *testing.T, runner sandbox.Runner, allowMutating bool) *env {
	t.Helper()
	return &env{replaytest.New(t, runner, allowMutating)}
}

// newEnvOn builds an env whose service uses store (the embedded one, or a
// wrapper around it that injects faults).
func newEnvOn(t *testing.T, st *embedded.Store, store procedures.Store, runner sandbox.Runner, allowMutating bool) *env {
	t.Helper()
	return &env{replaytest.NewOn(t, st, store, runner, allowMutating)}
}
