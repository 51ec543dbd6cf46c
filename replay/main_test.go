package replay_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/procgraph/procgraph/replay"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/procedures"
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
	fail  map[string]string // tool -> error message
	// onCall, when set, runs at each call before it is answered (outside
	// the lock): what changes the world in the middle of a run.
	onCall func(tool string)
}

func (d *recorder) Dispatch(ctx context.Context, tool string, args map[string]any) (any, error) {
	d.mu.Lock()
	d.calls = append(d.calls, call{tool, args})
	msg, fail := d.fail[tool]
	onCall := d.onCall
	d.mu.Unlock()
	if onCall != nil {
		onCall(tool)
	}
	if fail {
		return nil, fmt.Errorf("%s", msg)
	}
	return map[string]any{"tool": tool, "args": args}, nil
}

func (d *recorder) tools() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := []string{}
	for _, c := range d.calls {
		out = append(out, c.Tool)
	}
	return out
}

func (d *recorder) saw(tool string) bool { return slices.Contains(d.tools(), tool) }

// env is one test's world: a real embedded store, the service over it, a
// replayer and its recording dispatcher.
type env struct {
	t     *testing.T
	store *embedded.Store
	svc   *procedures.Service
	rp    *replay.Replayer
	disp  *recorder
}

// defaultTools is the catalogue most tests use.
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
// wrapper around it that injects faults).
func newEnvOn(t *testing.T, st *embedded.Store, store procedures.Store, runner sandbox.Runner, allowMutating bool) *env {
	t.Helper()
	// The catalogue goes in through the real store: store may be one that
	// injects faults.
	if _, err := procedures.NewService(st, procedures.Options{}).PutCatalogue(context.Background(), defaultTools, "tester"); err != nil {
		t.Fatal(err)
	}
	svc := procedures.NewService(store, procedures.Options{AllowMutatingAutorun: allowMutating})
	disp := &recorder{}
	rp := replay.New(svc, runner, disp, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}})
	return &env{t: t, store: st, svc: svc, rp: rp, disp: disp}
}

// capture stores code as a succeeded procedure and returns it.
func (e *env) capture(code string) *procedures.Procedure {
	e.t.Helper()
	return e.captureStatus(code, procedures.StatusSucceeded)
}

func (e *env) captureStatus(code string, status procedures.Status) *procedures.Procedure {
	e.t.Helper()
	out, err := e.svc.Capture(context.Background(), procedures.CaptureRequest{Code: code, Status: status, SessionID: "capture"})
	if err != nil {
		e.t.Fatalf("capture: %v\n%s", err, code)
	}
	return out.Procedure
}

func (e *env) get(name string) *procedures.Procedure {
	e.t.Helper()
	p, err := e.svc.Get(context.Background(), name)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) decisions(name string) []procedures.Decision {
	e.t.Helper()
	ds, err := e.svc.Decisions(context.Background(), procedures.DecisionFilter{Procedure: name, Kind: procedures.KindInvoke})
	if err != nil {
		e.t.Fatal(err)
	}
	return ds
}

func (e *env) invoke(req replay.InvokeRequest) (*replay.InvokeResult, error) {
	return e.rp.Invoke(context.Background(), req)
}

// mustSucceed invokes and requires a succeeded run.
func (e *env) mustSucceed(req replay.InvokeRequest) *replay.InvokeResult {
	e.t.Helper()
	res, err := e.invoke(req)
	if err != nil {
		e.t.Fatalf("Invoke(%s): %v", req.Name, err)
	}
	if res.Status != replay.StatusSucceeded {
		e.t.Fatalf("Invoke(%s): status %s, error %+v", req.Name, res.Status, res.Error)
	}
	return res
}

// mustDeny invokes and requires a denial with reason; it returns the decision.
func (e *env) mustDeny(req replay.InvokeRequest, reason string) procedures.Decision {
	e.t.Helper()
	res, err := e.invoke(req)
	if fault.ErrorCode(err) != fault.CodeDenied {
		e.t.Fatalf("Invoke(%s) = %+v, %v; want denied", req.Name, res, err)
	}
	d, ok := procedures.DecisionOf(err)
	if !ok || d.Reason != reason || d.Outcome != procedures.Denied {
		e.t.Fatalf("decision %+v, want denied %s", d, reason)
	}
	return d
}

// The procedures most tests use.
const (
	readOnlyCode = `jobs = tools.get_jobs(task_id=task_id)
logs = tools.fetch_logs(task_id=task_id)
return {"jobs": jobs, "logs": logs}`
	stateChangingCode = `jobs = tools.get_jobs(task_id=task_id)
return tools.kill_job(job_id=task_id)`
)
