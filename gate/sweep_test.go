package gate_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/gate"

	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
)

// clock is a settable clock for the gate's deadlines.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

// holdDispatcher answers every call once release is closed, and says when
// a call arrived: a run that is slow, but alive.
type holdDispatcher struct {
	arrived chan string
	release chan struct{}
}

func (d *holdDispatcher) Dispatch(_ context.Context, tool string, _ map[string]any) (any, error) {
	d.arrived <- tool
	<-d.release
	return map[string]any{"ok": true}, nil
}

// sweepWorld is a gate over a real embedded store, on a settable clock,
// whose upstream holds every call until released.
type sweepWorld struct {
	e     *env
	clock *clock
	disp  *holdDispatcher
	g     *gate.Gate
}

func newSweepWorld(t *testing.T) *sweepWorld {
	t.Helper()
	e := newEnv(t, sandbox.NewInProcess(), false)
	w := &sweepWorld{e: e, clock: &clock{now: time.Now()}, disp: &holdDispatcher{arrived: make(chan string, 4), release: make(chan struct{})}}
	rp := replay.New(e.Service, sandbox.NewInProcess(), w.disp, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}, Now: w.clock.Now})
	w.g = gate.New(rp, e.turns, gate.Options{RunGrace: time.Minute})
	return w
}

// approved submits the kill turn and approves it (run_once).
func (w *sweepWorld) approved(t *testing.T, req gate.TurnRequest) *gate.TurnRecord {
	t.Helper()
	id := mustPending(t, w.g, req)
	if _, _, err := w.g.Resolve(context.Background(), gate.ResolveRequest{ID: id, Choice: gate.ChoiceRunOnce, Actor: "op", HasGrant: true}); err != nil {
		t.Fatal(err)
	}
	return w.stored(t, id)
}

func (w *sweepWorld) stored(t *testing.T, id string) *gate.TurnRecord {
	t.Helper()
	r, err := w.e.turns.GetApproval(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// sweep sweeps and requires it to change want turns.
func (w *sweepWorld) sweep(t *testing.T, want int) {
	t.Helper()
	n, err := w.g.Sweep(context.Background())
	if err != nil || n != want {
		t.Fatalf("sweep changed %d turns (%v), want %d", n, err, want)
	}
}

// lostAt is the first instant at which a turn claimed running is lost for g.
func (w *sweepWorld) lostAt(r *gate.TurnRecord) time.Time {
	return r.Deadline.Add(w.g.MaxRun()).Add(time.Millisecond)
}

// TestSweepEndsLostRuns: a turn claimed running by an instance that died
// before marking it done is ended as failed, without code or argument
// values, once no run can still be in progress (its deadline, the run
// timeout and the grace) — by the sweeper, or by any read. Before that it
// stays running (only purged past its deadline); sweeping again changes
// nothing.
func TestSweepEndsLostRuns(t *testing.T) {
	for _, path := range []string{"sweep", "read"} {
		t.Run(path, func(t *testing.T) {
			ctx := context.Background()
			w := newSweepWorld(t)
			cur := w.approved(t, turnKill(0))
			// The requester's instance claims the run, then dies.
			claimed := *cur
			claimed.Status = gate.TurnRunning
			if _, err := w.e.turns.TransitionTurn(ctx, claimed, []gate.TurnStatus{gate.TurnApproved}, true, w.clock.Now()); err != nil {
				t.Fatal(err)
			}
			w.sweep(t, 0)
			w.clock.Set(w.lostAt(cur).Add(-2 * time.Millisecond))
			w.sweep(t, 1) // purged, still running
			if r := w.stored(t, cur.ID); r.Status != gate.TurnRunning || r.HoldsValues() {
				t.Fatalf("before its run is lost: %s, holds values %v", r.Status, r.HoldsValues())
			}
			w.clock.Set(w.lostAt(cur))
			switch path {
			case "sweep":
				w.sweep(t, 1)
			case "read":
				got, err := w.g.Get(ctx, cur.ID, "agent", 0)
				if err != nil || got.Status != gate.TurnFailed {
					t.Fatalf("get: %+v, %v", got, err)
				}
			}
			if r := w.stored(t, cur.ID); r.Status != gate.TurnFailed || r.HoldsValues() {
				t.Fatalf("lost run stored as %s, holds values %v", r.Status, r.HoldsValues())
			}
			w.sweep(t, 0)
			select {
			case c := <-w.disp.arrived:
				t.Fatalf("the upstream saw %s", c)
			default:
			}
		})
	}
}

// TestSweepExpiresUnreadTurns: pending and approved turns past their
// deadline that nobody reads again are expired by the sweeper, with their
// approval_expired decision, and lose their code and argument values; live
// ones are left as they are.
func TestSweepExpiresUnreadTurns(t *testing.T) {
	w := newSweepWorld(t)
	pending := mustPending(t, w.g, turnKill(0))
	approved := w.approved(t, turnKill(0))
	live := w.stored(t, pending)
	w.sweep(t, 0)
	w.clock.Set(live.Deadline.Add(time.Second))
	fresh := mustPending(t, w.g, turnKill(0))
	w.sweep(t, 2)
	for _, id := range []string{pending, approved.ID} {
		if r := w.stored(t, id); r.Status != gate.TurnExpired || r.HoldsValues() {
			t.Fatalf("%s: %s, holds values %v", id, r.Status, r.HoldsValues())
		}
	}
	if r := w.stored(t, fresh); r.Status != gate.TurnPending || !r.HoldsValues() {
		t.Fatalf("the live turn was swept: %s", r.Status)
	}
	ds, err := w.e.Service.Decisions(context.Background(), audit.DecisionFilter{Kind: audit.KindTurn})
	if err != nil {
		t.Fatal(err)
	}
	expired := 0
	for _, d := range ds {
		if d.Reason == audit.ReasonApprovalExpired {
			expired++
		}
	}
	if expired != 2 {
		t.Fatalf("%d approval_expired decisions, want 2", expired)
	}
}

// TestLostRunEndsOnce: a run that is slow but alive and the sweeper race
// to end the turn; exactly one of them is stored. Within the grace the run
// wins: the sweeper leaves it and the run marks it done (and captures it).
// Past it the sweeper wins: the turn stays failed when the run finally
// ends, the run's answer says so (with what the run did), and nothing is
// captured.
func TestLostRunEndsOnce(t *testing.T) {
	for _, c := range []struct {
		name    string
		past    time.Duration // how far past the run's loss the sweep looks
		stored  gate.TurnStatus
		capture bool
	}{
		{"alive within the grace: the run wins", -time.Second, gate.TurnSucceeded, true},
		{"past the grace: the sweeper wins", 0, gate.TurnFailed, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			w := newSweepWorld(t)
			req := turnKill(0)
			req.Capture, req.MayCapture = &gate.TurnCapture{Summary: "kill a job"}, true
			cur := w.approved(t, req)
			type result struct {
				ans *gate.TurnAnswer
				err error
			}
			done := make(chan result, 1)
			go func() { ans, err := w.g.Run(ctx, cur.ID, "agent"); done <- result{ans, err} }()
			<-w.disp.arrived // claimed, and in its tool call
			w.clock.Set(w.lostAt(cur).Add(c.past))
			w.sweep(t, 1) // purged past its deadline, or ended
			close(w.disp.release)
			res := <-done
			if res.err != nil || !res.ans.Ran() || res.ans.Status != replay.StatusSucceeded {
				t.Fatalf("run: %+v, %v", res.ans, res.err)
			}
			if res.ans.Turn.Status != c.stored {
				t.Fatalf("the run answered turn status %s, want %s", res.ans.Turn.Status, c.stored)
			}
			if got := w.stored(t, cur.ID); got.Status != c.stored || got.HoldsValues() {
				t.Fatalf("stored %s (holds values %v), want %s", got.Status, got.HoldsValues(), c.stored)
			}
			if (res.ans.Procedure != nil) != c.capture {
				t.Fatalf("captured %v, want %v", res.ans.Procedure != nil, c.capture)
			}
			w.sweep(t, 0)
		})
	}
}

// TestSweepAcrossInstances: two gates (two instances: each its own
// service, replayer and gate) sweep one store at once, over more turns than
// one page of the list. Every lost run is ended once and every unread
// approval expired once: one run_lost or approval_expired decision each,
// whichever instance got there first.
func TestSweepAcrossInstances(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandbox.NewInProcess(), false)
	newGate := func() *gate.Gate {
		svc := procedures.NewService(e.Store, procedures.Options{})
		return gate.New(replay.New(svc, sandbox.NewInProcess(), e.Upstream, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}}), e.Store, gate.Options{})
	}
	a, b := newGate(), newGate()
	at := time.Now().Add(-2 * time.Hour) // deadlines and runs long past
	const running, pending = gate.MaxApprovalLimit + 20, 30
	for i := range running + pending {
		r := storetest.PendingTurn("s", at.Add(time.Duration(i)*time.Millisecond), gate.DefaultApprovalTimeout)
		if err := e.turns.CreateApproval(ctx, r, gate.PendingBounds{Total: running + pending}, at); err != nil {
			t.Fatal(err)
		}
		if i < running {
			r.Status = gate.TurnApproved
			if _, err := e.turns.TransitionTurn(ctx, r, []gate.TurnStatus{gate.TurnPending}, true, at); err != nil {
				t.Fatal(err)
			}
			r.Status = gate.TurnRunning
			if _, err := e.turns.TransitionTurn(ctx, r, []gate.TurnStatus{gate.TurnApproved}, true, at); err != nil {
				t.Fatal(err)
			}
		}
	}
	var wg sync.WaitGroup
	counts := make([]int, 2)
	errs := make([]error, 2)
	for i, g := range []*gate.Gate{a, b} {
		wg.Add(1)
		go func() { defer wg.Done(); counts[i], errs[i] = g.Sweep(ctx) }()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil || counts[0]+counts[1] != running+pending {
		t.Fatalf("sweeps changed %v (%v), want %d in all", counts, errs, running+pending)
	}
	storetest.RequireSwept(t, e.Service, e.turns, running, pending)
}
