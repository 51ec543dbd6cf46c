package gate_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/procgraph/procgraph/gate"

	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
)

// countedReads is the real embedded store, counting the turn reads.
type countedReads struct {
	*embedded.Store
	gets atomic.Int64
}

func (c *countedReads) GetApproval(ctx context.Context, id string) (*gate.TurnRecord, error) {
	c.gets.Add(1)
	return c.Store.GetApproval(ctx, id)
}

// waitFor spins until cond holds (no time limit: the test's own ends it).
func waitFor(cond func() bool) {
	for !cond() {
		time.Sleep(time.Millisecond)
	}
}

// TestWaitReadsOncePerTurn: however many requests wait on a turn, the
// gate's poller reads it once per round, and the waiters read it only when
// woken — here by a resolution on another instance (another gate on the
// same store), which the poller finds.
func TestWaitReadsOncePerTurn(t *testing.T) {
	ctx := context.Background()
	st := replaytest.OpenStore(t)
	cs := &countedReads{Store: st}
	e := newEnvOn(t, st, cs, sandbox.NewInProcess(), false)
	g := gate.New(e.Replayer, e.turns, gate.Options{})
	g.SetPollEvery(time.Hour) // rounds are played by hand below
	other := gate.New(replay.New(procedures.NewService(st, procedures.Options{}), sandbox.NewInProcess(), e.Upstream, replay.Options{}), st, gate.Options{})
	ids := []string{mustPending(t, g, turnKill(0)), mustPending(t, g, turnKill(0))}

	const perTurn = 4
	base := cs.gets.Load()
	var wg sync.WaitGroup
	got := make([]*gate.Turn, 2*perTurn)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], _ = g.Get(ctx, ids[i%2], "agent", 30*time.Second)
		}()
	}
	// Each Get reads the turn, and its wait once more before it sleeps.
	waitFor(func() bool { return g.Waiting() == len(got) && cs.gets.Load() == base+2*int64(len(got)) })
	for round := 1; round <= 3; round++ {
		g.PollOnce()
		if n := cs.gets.Load() - base - 2*int64(len(got)); n != int64(round*len(ids)) {
			t.Fatalf("after %d polling rounds, %d more reads; want %d (one per turn per round)", round, n, round*len(ids))
		}
	}
	if _, _, err := other.Resolve(ctx, gate.ResolveRequest{ID: ids[0], Choice: gate.ChoiceRunOnce, Actor: "op", HasGrant: true}); err != nil {
		t.Fatal(err)
	}
	if g.Waiting() != len(got) {
		t.Fatal("a resolution on another instance woke a waiter without the poller")
	}
	g.PollOnce()
	waitFor(func() bool { return g.Waiting() == perTurn })
	if _, err := other.Cancel(ctx, ids[1], "agent"); err != nil {
		t.Fatal(err)
	}
	g.PollOnce()
	wg.Wait()
	for i, turn := range got {
		want := []gate.TurnStatus{gate.TurnApproved, gate.TurnCancelled}[i%2]
		if turn == nil || turn.Status != want {
			t.Fatalf("waiter %d saw %+v, want %s", i, turn, want)
		}
	}
	if g.PollOnce() {
		t.Fatal("the poller goes on with nobody waiting")
	}
}

// TestWaitSeesAnotherInstance: an agent's turn waits on one gate; an
// operator approves it through another gate on the same store (another
// instance, whose changes cannot wake this one's waiters directly). The
// poller sees it and the waiting turn runs, once.
func TestWaitSeesAnotherInstance(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandbox.NewInProcess(), false)
	a := gate.New(e.Replayer, e.turns, gate.Options{})
	b := gate.New(replay.New(procedures.NewService(e.Store, procedures.Options{}), sandbox.NewInProcess(), e.Upstream, replay.Options{}), e.Store, gate.Options{})
	type result struct {
		ans *gate.TurnAnswer
		err error
	}
	done := make(chan result, 1)
	go func() { ans, err := a.Submit(ctx, turnKill(gate.MaxWait)); done <- result{ans, err} }()
	waitFor(func() bool { return a.Waiting() == 1 })
	list, err := b.Approvals(ctx, gate.ApprovalFilter{Status: gate.TurnPending}, false)
	if err != nil || len(list) != 1 {
		t.Fatalf("approvals on b: %v, %v", list, err)
	}
	if _, _, err := b.Resolve(ctx, gate.ResolveRequest{ID: list[0].ID, Choice: gate.ChoiceRunOnce, Actor: "op", HasGrant: true}); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.err != nil || !res.ans.Ran() || res.ans.Turn.Status != gate.TurnSucceeded {
		t.Fatalf("the waiting submit: %+v, %v", res.ans, res.err)
	}
	if got := e.Upstream.Tools(); len(got) != 1 || got[0] != "kill_job" {
		t.Fatalf("the upstream saw %v, want kill_job once", got)
	}
}
