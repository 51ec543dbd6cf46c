// Package replaytest is the harness the tests of replay and gate share: a
// recording upstream (the one edge those tests fake), the catalogue and
// procedures most of them use, and an Env holding a real embedded store, the
// service over it and a replayer dispatching to the recorder. It also holds
// the world the binding-cost tests of the gate (store calls) and of the
// Neo4j store (statements) set up alike (BindCost).
package replaytest

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
)

// Call is one call the Recorder saw.
type Call struct {
	Tool string
	Args map[string]any
}

// Recorder is the recording dispatcher: the upstream tool server, the one
// edge faked in these tests. It records every call that reaches it and
// answers {"tool": tool, "args": args}. The zero value is ready to use.
type Recorder struct {
	mu    sync.Mutex
	calls []Call
	// Fail maps a tool to the error message its calls fail with.
	Fail map[string]string
	// OnCall, when set, runs at each call before it is answered (outside
	// the lock): what changes the world in the middle of a run.
	OnCall func(tool string)
}

// Dispatch records the call and answers it (replay.Dispatcher).
func (d *Recorder) Dispatch(ctx context.Context, tool string, args map[string]any) (any, error) {
	d.mu.Lock()
	d.calls = append(d.calls, Call{tool, args})
	msg, fail := d.Fail[tool]
	onCall := d.OnCall
	d.mu.Unlock()
	if onCall != nil {
		onCall(tool)
	}
	if fail {
		return nil, fmt.Errorf("%s", msg)
	}
	return map[string]any{"tool": tool, "args": args}, nil
}

// Calls returns the calls seen so far, in order.
func (d *Recorder) Calls() []Call {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.calls)
}

// Tools returns the tools of the calls seen so far, in order (never nil).
func (d *Recorder) Tools() []string {
	out := []string{}
	for _, c := range d.Calls() {
		out = append(out, c.Tool)
	}
	return out
}

// Saw reports whether a call of tool reached the recorder.
func (d *Recorder) Saw(tool string) bool { return slices.Contains(d.Tools(), tool) }

// DefaultTools is the catalogue most tests use.
var DefaultTools = []procedures.Tool{
	{Name: "get_jobs", ReadOnly: true, ExternalAccess: true},
	{Name: "fetch_logs", ReadOnly: true},
	{Name: "kill_job"},
	{Name: "restart_job"},
}

// The procedures most tests use (over DefaultTools).
const (
	// ReadOnlyCode calls two read-only tools.
	ReadOnlyCode = `jobs = tools.get_jobs(task_id=task_id)
logs = tools.fetch_logs(task_id=task_id)
return {"jobs": jobs, "logs": logs}`
	// StateChangingCode calls a read-only tool, then a mutating one.
	StateChangingCode = `jobs = tools.get_jobs(task_id=task_id)
return tools.kill_job(job_id=task_id)`
)

// Env is one test's world: a real embedded store, the service over it (or
// over a wrapper of it), a replayer and its recording upstream.
type Env struct {
	T        *testing.T
	Store    *embedded.Store
	Service  *procedures.Service
	Replayer *replay.Replayer
	Upstream *Recorder
}

// OpenStore opens a fresh embedded store in tb's temporary directory,
// closed when tb ends.
func OpenStore(tb testing.TB) *embedded.Store {
	tb.Helper()
	st, err := embedded.Open(filepath.Join(tb.TempDir(), "procgraph.db"), embedded.Options{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	return st
}

// New builds an Env over a fresh store holding DefaultTools, replaying in
// runner; allowMutating is --allow-mutating-autorun.
func New(t *testing.T, runner sandbox.Runner, allowMutating bool) *Env {
	t.Helper()
	st := OpenStore(t)
	return NewOn(t, st, st, runner, allowMutating)
}

// NewOn builds an Env whose service uses store: st itself, or a wrapper
// around it that counts calls or injects faults. The catalogue goes in
// through st, so a wrapper that injects faults does not refuse it.
func NewOn(t *testing.T, st *embedded.Store, store procedures.Store, runner sandbox.Runner, allowMutating bool) *Env {
	t.Helper()
	if _, err := procedures.NewService(st, procedures.Options{}).PutCatalogue(context.Background(), DefaultTools, "tester"); err != nil {
		t.Fatal(err)
	}
	svc := procedures.NewService(store, procedures.Options{AllowMutatingAutorun: allowMutating})
	up := &Recorder{}
	rp := replay.New(svc, runner, up, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}})
	return &Env{T: t, Store: st, Service: svc, Replayer: rp, Upstream: up}
}

// WithClock replaces e's replayer by one in process whose clock is now.
func (e *Env) WithClock(now func() time.Time) {
	e.Replayer = replay.New(e.Service, sandbox.NewInProcess(), e.Upstream, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}, Now: now})
}

// Capture stores code as a succeeded procedure and returns it.
func (e *Env) Capture(code string) *procedures.Procedure {
	e.T.Helper()
	return e.CaptureStatus(code, procedures.StatusSucceeded)
}

// CaptureStatus stores code as a procedure of status and returns it.
func (e *Env) CaptureStatus(code string, status procedures.Status) *procedures.Procedure {
	e.T.Helper()
	out, err := e.Service.Capture(context.Background(), procedures.CaptureRequest{Code: code, Status: status, SessionID: "capture"})
	if err != nil {
		e.T.Fatalf("capture: %v\n%s", err, code)
	}
	return out.Procedure
}

// Get returns the procedure name.
func (e *Env) Get(name string) *procedures.Procedure {
	e.T.Helper()
	p, err := e.Service.Get(context.Background(), name)
	if err != nil {
		e.T.Fatal(err)
	}
	return p
}

// Decisions returns the invoke decisions recorded on name.
func (e *Env) Decisions(name string) []audit.Decision {
	e.T.Helper()
	ds, err := e.Service.Decisions(context.Background(), audit.DecisionFilter{Procedure: name, Kind: audit.KindInvoke})
	if err != nil {
		e.T.Fatal(err)
	}
	return ds
}

// Invoke replays req.
func (e *Env) Invoke(req replay.InvokeRequest) (*replay.InvokeResult, error) {
	return e.Replayer.Invoke(context.Background(), req)
}

// MustSucceed invokes and requires a succeeded run.
func (e *Env) MustSucceed(req replay.InvokeRequest) *replay.InvokeResult {
	e.T.Helper()
	res, err := e.Invoke(req)
	if err != nil {
		e.T.Fatalf("Invoke(%s): %v", req.Name, err)
	}
	if res.Status != replay.StatusSucceeded {
		e.T.Fatalf("Invoke(%s): status %s, error %+v", req.Name, res.Status, res.Error)
	}
	return res
}

// MustDeny invokes and requires a denial with reason; it returns the decision.
func (e *Env) MustDeny(req replay.InvokeRequest, reason string) audit.Decision {
	e.T.Helper()
	res, err := e.Invoke(req)
	if fault.ErrorCode(err) != fault.CodeDenied {
		e.T.Fatalf("Invoke(%s) = %+v, %v; want denied", req.Name, res, err)
	}
	d, ok := audit.DecisionOf(err)
	if !ok || d.Reason != reason || d.Outcome != audit.Denied {
		e.T.Fatalf("decision %+v, want denied %s", d, reason)
	}
	return d
}
