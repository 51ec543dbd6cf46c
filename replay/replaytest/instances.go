package replaytest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
)

// Instance is one server of AcrossInstances: its service (whose poller of
// the store's authorization revision the test ticks with
// PollAuthorization) and its gate.
type Instance struct {
	Svc  *procedures.Service
	Gate *gate.Gate
}

// Clock is a settable clock for a service's Options.Now.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock is a Clock at at.
func NewClock(at time.Time) *Clock { return &Clock{now: at} }

// Now is the clock's time.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(d) }

// NewInstance is a server over store and turns with its own service (on
// clk) and gate, its poller started: one poll of the authorization
// revision.
func NewInstance(tb testing.TB, store procedures.Store, turns gate.TurnStore, clk *Clock) *Instance {
	tb.Helper()
	svc := procedures.NewService(store, procedures.Options{Now: clk.Now})
	if err := svc.PollAuthorization(context.Background()); err != nil {
		tb.Fatal(err)
	}
	g := gate.New(replay.New(svc, sandbox.NewInProcess(), &Recorder{}, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}}), turns, gate.Options{})
	return &Instance{Svc: svc, Gate: g}
}

// Poll is the instance's next poll of the store's authorization revision.
func (in *Instance) Poll(tb testing.TB) {
	tb.Helper()
	if err := in.Svc.PollAuthorization(context.Background()); err != nil {
		tb.Fatal(err)
	}
}

// CoveredBy submits req on the instance and reports whether it ran, by
// reason (a turn asked is not covered); any other answer fails tb.
func (in *Instance) CoveredBy(tb testing.TB, req gate.TurnRequest, reason string) bool {
	tb.Helper()
	ans, err := in.Gate.Submit(context.Background(), req)
	switch {
	case err != nil:
		tb.Fatal(err)
	case ans.InvokeResult != nil && ans.Decision.Reason != reason:
		tb.Fatalf("ran with decision %+v, want %s", ans.Decision, reason)
	case ans.InvokeResult == nil && ans.Turn.Status != gate.TurnPending:
		tb.Fatalf("neither ran nor asked: %+v", ans)
	}
	return ans.InvokeResult != nil
}

// The turns of AcrossInstances: a read-only program, its procedure's code
// and two texts of it.
var (
	instancesTools = []procedures.Tool{
		{Name: "get_jobs", ReadOnly: true, InputSchema: map[string]any{"type": "object", "properties": map[string]any{"task_id": map[string]any{"type": "integer"}}}},
		{Name: "fetch_logs", ReadOnly: true, InputSchema: map[string]any{"type": "object", "properties": map[string]any{"task_id": map[string]any{"type": "integer"}}}},
	}
	instancesCode = "j = tools.get_jobs(task_id=1)\nl = tools.fetch_logs(task_id=1)\nreturn [j, l]\n"
	// InstancesPolicyTurn is the turn of session "s" the operator answers
	// auto_run on, a text of the program; InstancesGrantTurn another text
	// of it in session "g", which only the grant covers.
	InstancesPolicyTurn = gate.TurnRequest{Code: "jobs = tools.get_jobs(task_id=42)\nlogs = tools.fetch_logs(task_id=42)\nreturn [jobs, logs]\n",
		SessionID: "s", Phase: audit.PhaseInteractive, Actor: "agent"}
	InstancesGrantTurn = gate.TurnRequest{Code: "task = 5\na = tools.get_jobs(task_id=task)\nb = tools.fetch_logs(task_id=task)\nreturn [a, b]\n",
		SessionID: "g", Phase: audit.PhaseInteractive, Actor: "agent"}
)

// Authorized sets up, through a, what AcrossInstances revokes: the
// catalogue, a procedure of the program with a durable grant, and a
// session policy (auto_run) on InstancesPolicyTurn; it returns the
// procedure's name. The catalogue holds the program's tools and more.
func Authorized(tb testing.TB, a *Instance, more ...procedures.Tool) string {
	tb.Helper()
	ctx := context.Background()
	if _, err := a.Svc.PutCatalogue(ctx, append(more, instancesTools...), "tester"); err != nil {
		tb.Fatal(err)
	}
	// The policy first: once granted, the grant would decide the turn.
	ans, err := a.Gate.Submit(ctx, InstancesPolicyTurn)
	if err != nil || ans.Turn.Status != gate.TurnPending {
		tb.Fatalf("submit: %+v, %v", ans, err)
	}
	if _, _, err := a.Gate.Resolve(ctx, gate.ResolveRequest{ID: ans.Turn.ID, Choice: gate.ChoiceAutoRun, Reason: "ok", Actor: "op", HasGrant: true}); err != nil {
		tb.Fatal(err)
	}
	out, err := a.Svc.Capture(ctx, procedures.CaptureRequest{Code: instancesCode, Status: procedures.StatusSucceeded, SessionID: "capture"})
	if err != nil {
		tb.Fatal(err)
	}
	if _, _, err := a.Svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: out.Procedure.Name, Enabled: true, Actor: "op"}); err != nil {
		tb.Fatal(err)
	}
	return out.Procedure.Name
}

// AcrossInstances: two instances over one store (store and turns); a grant
// revoked and a session's policies deleted on B are honoured by A after
// A's next poll of the store's authorization revision, and never trusted
// after it, however long A's cache held them (docs/design.md "What an
// authorization binds to"). Before that poll A may still be decided by
// what it read (the bound: one poll interval); the test pins that too, so
// that it is the poll that ends them.
func AcrossInstances(t *testing.T, store procedures.Store, turns gate.TurnStore) {
	ctx := context.Background()
	clk := NewClock(time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC))
	a, b := NewInstance(t, store, turns, clk), NewInstance(t, store, turns, clk)
	name := Authorized(t, a)
	a.Poll(t)
	b.Poll(t)
	for i := range 2 { // filled, then from A's cache
		if !a.CoveredBy(t, InstancesGrantTurn, audit.ReasonDurableAutoRun) {
			t.Fatalf("turn %d: the grant does not cover the program on A", i)
		}
		if !a.CoveredBy(t, InstancesPolicyTurn, audit.ReasonSessionPolicy) {
			t.Fatalf("turn %d: the policy does not cover the program on A", i)
		}
	}

	// B revokes the grant and deletes the session's policies.
	if _, _, err := b.Svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: name, Enabled: false, Actor: "op"}); err != nil {
		t.Fatal(err)
	}
	if n, _, err := b.Gate.RevokePolicies(ctx, InstancesPolicyTurn.SessionID, "", "op"); err != nil || n != 1 {
		t.Fatalf("revoke policies: %d, %v", n, err)
	}
	if !a.CoveredBy(t, InstancesGrantTurn, audit.ReasonDurableAutoRun) || !a.CoveredBy(t, InstancesPolicyTurn, audit.ReasonSessionPolicy) {
		t.Fatal("A no longer trusts what it read before its poll: the test no longer shows the poll is what ends it")
	}
	a.Poll(t)
	for i := range 3 {
		if a.CoveredBy(t, InstancesGrantTurn, audit.ReasonDurableAutoRun) {
			t.Fatalf("turn %d after A's poll: the grant revoked on B still covers it", i)
		}
		if a.CoveredBy(t, InstancesPolicyTurn, audit.ReasonSessionPolicy) {
			t.Fatalf("turn %d after A's poll: the policy deleted on B still covers it", i)
		}
		clk.Add(time.Hour)
		a.Poll(t)
	}
}
