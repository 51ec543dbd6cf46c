package gate_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/procgraph/procgraph/gate"

	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
)

// call is one call the recording dispatcher saw.
type call struct {
	Tool string
	Args map[string]any
}

// recorder is the recording dispatcher: the upstream tool server, the one
// edge faked in these tests. It records every call that reaches it.
type recorder struct {
	mu    sync.Mutex
	calls []call
}

func (d *recorder) Dispatch(ctx context.Context, tool string, args map[string]any) (any, error) {
	d.mu.Lock()
	d.calls = append(d.calls, call{tool, args})
	d.mu.Unlock()
	return map[string]any{"tool": tool, "args": args}, nil
}

// env is one test's world: a real embedded store, the service over it, a
// replayer and its recording dispatcher.
type env struct {
	t     *testing.T
	store *embedded.Store
	turns gate.TurnStore // store, or the wrapper the service uses
	svc   *procedures.Service
	rp    *replay.Replayer
	disp  *recorder
}

// defaultTools is the catalogue the tests use.
var defaultTools = []procedures.Tool{
	{Name: "get_jobs", ReadOnly: true, ExternalAccess: true},
	{Name: "fetch_logs", ReadOnly: true},
	{Name: "kill_job"},
	{Name: "restart_job"},
}

func newEnv(t *testing.T, runner sandbox.Runner, allowMutating bool) *env {
	t.Helper()
	st, err := embedded.Open(filepath.Join(t.TempDir(), "procgraph.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return newEnvOn(t, st, st, runner, allowMutating)
}

// newEnvOn builds an env whose service uses store (the embedded one, or a
// wrapper around it that counts or injects faults).
func newEnvOn(t *testing.T, st *embedded.Store, store procedures.Store, runner sandbox.Runner, allowMutating bool) *env {
	t.Helper()
	if _, err := procedures.NewService(st, procedures.Options{}).PutCatalogue(context.Background(), defaultTools, "tester"); err != nil {
		t.Fatal(err)
	}
	svc := procedures.NewService(store, procedures.Options{AllowMutatingAutorun: allowMutating})
	disp := &recorder{}
	rp := replay.New(svc, runner, disp, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}})
	turns, ok := store.(gate.TurnStore)
	if !ok {
		t.Fatalf("%T keeps no turns", store)
	}
	return &env{t: t, store: st, turns: turns, svc: svc, rp: rp, disp: disp}
}

// withClock is e's replayer again with the clock now.
func (e *env) withClock(now func() time.Time) {
	e.rp = replay.New(e.svc, sandbox.NewInProcess(), e.disp, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}, Now: now})
}

// readOnlyCode is a read-only procedure.
const readOnlyCode = `jobs = tools.get_jobs(task_id=task_id)
logs = tools.fetch_logs(task_id=task_id)
return {"jobs": jobs, "logs": logs}`

func (d *recorder) tools() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := []string{}
	for _, c := range d.calls {
		out = append(out, c.Tool)
	}
	return out
}
