package gate_test

import (
	"testing"

	"github.com/procgraph/procgraph/gate"

	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
)

// env is one test's world (replaytest.Env: a real embedded store, the
// service over it, a replayer and its recording upstream) and the turn
// store the gate uses.
type env struct {
	*replaytest.Env
	turns gate.TurnStore // Store, or the wrapper the service uses
}

func newEnv(t *testing.T, runner sandbox.Runner, allowMutating bool) *env {
	t.Helper()
	st := replaytest.OpenStore(t)
	return newEnvOn(t, st, st, runner, allowMutating)
}

// newEnvOn builds an env whose service uses store (the embedded one, or a
// wrapper around it that counts or injects faults).
func newEnvOn(t *testing.T, st *embedded.Store, store procedures.Store, runner sandbox.Runner, allowMutating bool) *env {
	t.Helper()
	turns, ok := store.(gate.TurnStore)
	if !ok {
		t.Fatalf("%T keeps no turns", store)
	}
	return &env{Env: replaytest.NewOn(t, st, store, runner, allowMutating), turns: turns}
}
