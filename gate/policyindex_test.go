package gate_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
)

// policyWorld is one store, a fake clock, and instances over them: each
// instance is its own service and gate, as two servers on one store.
type policyWorld struct {
	cs   *countedStore
	clk  *clock
	svcs []*procedures.Service
}

func newPolicyWorld(t *testing.T) *policyWorld {
	t.Helper()
	w := &policyWorld{cs: &countedStore{Store: replaytest.OpenStore(t)}, clk: &clock{now: time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)}}
	typed := map[string]any{"type": "object", "properties": map[string]any{"task_id": map[string]any{"type": "integer"}}}
	svc := procedures.NewService(w.cs, procedures.Options{Now: w.clk.Now})
	if _, err := svc.PutCatalogue(context.Background(), []procedures.Tool{{Name: "get_jobs", ReadOnly: true, InputSchema: typed},
		{Name: "fetch_logs", ReadOnly: true, InputSchema: typed}}, "tester"); err != nil {
		t.Fatal(err)
	}
	return w
}

// instance is another server on the world's store, its poller of the
// authorization revision started (one poll; later ones are w.poll's).
func (w *policyWorld) instance() *gate.Gate {
	svc := procedures.NewService(w.cs, procedures.Options{Now: w.clk.Now})
	if err := svc.PollAuthorization(context.Background()); err != nil {
		panic(err)
	}
	w.svcs = append(w.svcs, svc)
	return gate.New(replay.New(svc, sandbox.NewInProcess(), &replaytest.Recorder{}, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}}), w.cs, gate.Options{})
}

// poll is each instance's next poll of the store's authorization revision:
// what bounds how long another instance's change may be unseen.
func (w *policyWorld) poll(tb testing.TB) {
	tb.Helper()
	for _, svc := range w.svcs {
		if err := svc.PollAuthorization(context.Background()); err != nil {
			tb.Fatal(err)
		}
	}
}

// movedAndPolled moves the store's authorization revision (a policy put
// and deleted in a session no turn uses, as another instance would) and
// polls svc: what it cached is dropped.
func movedAndPolled(tb testing.TB, ts gate.TurnStore, svc *procedures.Service) {
	tb.Helper()
	ctx := context.Background()
	p := gate.SessionPolicy{SessionID: "elsewhere", CodeHash: strings.Repeat("e", 64), Policy: gate.ChoiceAutoRun, SetBy: "op", SetAt: svc.Now()}
	if err := ts.PutPolicy(ctx, p, audit.Decision{ID: audit.NewDecisionID(svc.Now()), Kind: audit.KindPolicy, At: svc.Now(), Actor: "op", Outcome: audit.Allowed, Reason: "test"}); err != nil {
		tb.Fatal(err)
	}
	if err := svc.PollAuthorization(ctx); err != nil {
		tb.Fatal(err)
	}
}

// policyTurn is a read-only turn of session "s"; another text of one
// program for each n.
func policyTurn(n int) gate.TurnRequest {
	codes := []string{
		"jobs = tools.get_jobs(task_id=42)\nlogs = tools.fetch_logs(task_id=42)\nreturn [jobs, logs]\n",
		"# again\nl = tools.fetch_logs(task_id=43)\nj = tools.get_jobs(task_id=43)\nreturn [j, l]\n",
	}
	return gate.TurnRequest{Code: codes[n], SessionID: "s", Phase: audit.PhaseInteractive, Actor: "agent"}
}

// approveAutoRun submits req on g, which must ask, and answers auto_run.
func approveAutoRun(t *testing.T, g *gate.Gate, req gate.TurnRequest) {
	t.Helper()
	ctx := context.Background()
	id := mustPending(t, g, req)
	if _, _, err := g.Resolve(ctx, gate.ResolveRequest{ID: id, Choice: gate.ChoiceAutoRun, Reason: "ok", Actor: "op", HasGrant: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Run(ctx, id, "agent"); err != nil {
		t.Fatal(err)
	}
}

// policyReads is the store's policy reads in calls (a countedStore Take).
func policyReads(calls string) bool { return strings.Contains(calls, "Polic") }

// TestPolicyCoverReadsNoStore: once a session's policies were read, a
// turn a policy decides — by its exact text or as another text of the
// program — reads no policy from the store (the gate's policy index,
// docs/design.md "What an authorization binds to").
func TestPolicyCoverReadsNoStore(t *testing.T) {
	w := newPolicyWorld(t)
	g := w.instance()
	approveAutoRun(t, g, policyTurn(0))
	mustCoveredBy(t, g, policyTurn(0), true, audit.ReasonSessionPolicy) // reads the session's policies
	for _, n := range []int{0, 1} {
		w.cs.Take()
		mustCoveredBy(t, g, policyTurn(n), true, audit.ReasonSessionPolicy)
		if got := w.cs.Take(); policyReads(got) {
			t.Fatalf("text %d: a turn a policy covers made the store calls %s: it read the session's policies", n, got)
		}
	}
}

// TestPolicyWritesApplyAtOnce: a policy this instance sets, as the
// answer to a turn, covers the very next turn, and one it revokes stops
// applying to the very next turn, though the session's policies were
// read just before (an empty session's too).
func TestPolicyWritesApplyAtOnce(t *testing.T) {
	w := newPolicyWorld(t)
	g := w.instance()
	mustCoveredBy(t, g, policyTurn(1), false, "") // the session has no policy: read, asked
	approveAutoRun(t, g, policyTurn(0))
	mustCoveredBy(t, g, policyTurn(0), true, audit.ReasonSessionPolicy)
	if n, _, err := g.RevokePolicies(context.Background(), "s", "", "op"); err != nil || n != 1 {
		t.Fatalf("revoke: %d, %v", n, err)
	}
	mustCoveredBy(t, g, policyTurn(0), false, audit.ReasonSessionPolicy)
}

// TestPolicyOfAnotherInstance: a policy revoked on another instance stops
// applying here after this instance's next poll of the store's
// authorization revision; one set there is used here then, and until then
// the turn is asked (a policy not yet seen decides nothing: fail closed).
func TestPolicyOfAnotherInstance(t *testing.T) {
	w := newPolicyWorld(t)
	here, there := w.instance(), w.instance()

	mustCoveredBy(t, here, policyTurn(0), false, "") // read: none yet
	approveAutoRun(t, there, policyTurn(0))
	mustCoveredBy(t, here, policyTurn(1), false, audit.ReasonSessionPolicy) // not yet seen: asked
	w.poll(t)
	mustCoveredBy(t, here, policyTurn(1), true, audit.ReasonSessionPolicy)

	if n, _, err := there.RevokePolicies(context.Background(), "s", "", "op"); err != nil || n != 1 {
		t.Fatalf("revoke: %d, %v", n, err)
	}
	w.poll(t)
	mustCoveredBy(t, here, policyTurn(0), false, audit.ReasonSessionPolicy)
}

// revokingStore is the counted store whose first Policies read of a
// session is overtaken, after it read, by a revoke: the read's answer is
// what was stored before the revoke.
type revokingStore struct {
	*countedStore
	revoke func()
}

func (s *revokingStore) Policies(ctx context.Context, sessionID string) ([]gate.SessionPolicy, error) {
	ps, err := s.Store.Policies(ctx, sessionID)
	if s.revoke != nil {
		r := s.revoke
		s.revoke = nil
		r()
	}
	return ps, err
}

// TestPolicyReadOvertakenByRevoke: a read of the session's policies that
// began before this instance revoked them is not kept: the turn that read
// it may still be decided by what it read (the two were concurrent), the
// next one is not.
func TestPolicyReadOvertakenByRevoke(t *testing.T) {
	w := newPolicyWorld(t)
	rs := &revokingStore{countedStore: w.cs}
	svc := procedures.NewService(rs, procedures.Options{Now: w.clk.Now})
	if err := svc.PollAuthorization(context.Background()); err != nil {
		t.Fatal(err)
	}
	g := gate.New(replay.New(svc, sandbox.NewInProcess(), &replaytest.Recorder{}, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}}), rs, gate.Options{})
	approveAutoRun(t, g, policyTurn(0))
	rs.revoke = func() {
		if n, _, err := g.RevokePolicies(context.Background(), "s", "", "op"); err != nil || n != 1 {
			t.Errorf("revoke: %d, %v", n, err)
		}
	}
	if _, err := g.Submit(context.Background(), policyTurn(0)); err != nil {
		t.Fatal(err)
	}
	mustCoveredBy(t, g, policyTurn(0), false, audit.ReasonSessionPolicy)
}

// BenchmarkTurnCoveredByPolicy measures a turn a session policy covers
// (another text of the program the operator answered auto_run to), run
// included, in process on the embedded store: with the gate's policy
// index warm (no store read of a policy), and with the store's
// authorization revision moved and polled before each turn (the session's
// policies read, as every such turn read them before the index).
func BenchmarkTurnCoveredByPolicy(b *testing.B) {
	w := &policyWorld{cs: &countedStore{Store: replaytest.OpenStore(b)}, clk: &clock{now: time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)}}
	typed := map[string]any{"type": "object", "properties": map[string]any{"task_id": map[string]any{"type": "integer"}}}
	ctx := context.Background()
	svc := procedures.NewService(w.cs, procedures.Options{Now: w.clk.Now})
	if _, err := svc.PutCatalogue(ctx, []procedures.Tool{{Name: "get_jobs", ReadOnly: true, InputSchema: typed},
		{Name: "fetch_logs", ReadOnly: true, InputSchema: typed}}, "tester"); err != nil {
		b.Fatal(err)
	}
	g := w.instance()
	ans, err := g.Submit(ctx, policyTurn(0))
	if err != nil || ans.Turn.Status != gate.TurnPending {
		b.Fatalf("submit: %+v, %v", ans, err)
	}
	if _, _, err := g.Resolve(ctx, gate.ResolveRequest{ID: ans.Turn.ID, Choice: gate.ChoiceAutoRun, Reason: "ok", Actor: "op", HasGrant: true}); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		expired bool
	}{{"index", false}, {"store", true}} {
		b.Run(c.name, func(b *testing.B) {
			w.cs.Take()
			n := 0
			for b.Loop() {
				if c.expired {
					movedAndPolled(b, w.cs, w.svcs[0])
				}
				ans, err := g.Submit(ctx, policyTurn(1))
				if err != nil || !ans.Ran() || ans.Decision.Reason != audit.ReasonSessionPolicy {
					b.Fatalf("submit: %+v, %v", ans, err)
				}
				n++
			}
			b.ReportMetric(float64(strings.Count(w.cs.Take(), "Policies×"+strconv.Itoa(n))), "policy_reads/turn")
		})
	}
}
