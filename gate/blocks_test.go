package gate_test

import (
	"context"
	"testing"
	"time"

	"github.com/procgraph/procgraph/gate"

	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
)

// TestKeptBlocksGo: the block a gate keeps for a pending turn (prepared
// once, at submit) goes when the turn runs, is rejected or cancelled, and —
// for a turn nobody touches again here, expired by another instance — at
// the first sweep past its deadline: no code or argument values stay in memory longer than their
// turn can run.
func TestKeptBlocksGo(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandbox.NewInProcess(), false)
	clk := &clock{now: time.Now()}
	rp := replay.New(e.Service, sandbox.NewInProcess(), e.Upstream, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}, Now: clk.Now})
	g := gate.New(rp, e.turns, gate.Options{})
	resolve := func(id string, c gate.Choice) {
		t.Helper()
		if _, _, err := g.Resolve(ctx, gate.ResolveRequest{ID: id, Choice: c, Actor: "op", HasGrant: true}); err != nil {
			t.Fatal(err)
		}
	}
	want := func(n int, after string) {
		t.Helper()
		if got := g.KeptBlocks(); got != n {
			t.Fatalf("after %s: %d blocks kept, want %d", after, got, n)
		}
	}
	ran := mustPending(t, g, turnKill(0))
	rejected := mustPending(t, g, turnKill(0))
	cancelled := mustPending(t, g, turnKill(0))
	mustPending(t, g, turnKill(0)) // left alone
	want(4, "four pending turns")
	resolve(ran, gate.ChoiceRunOnce)
	want(4, "an approval (its block kept for the run)")
	if _, err := g.Run(ctx, ran, "agent"); err != nil {
		t.Fatal(err)
	}
	want(3, "the run")
	resolve(rejected, gate.ChoiceReject)
	want(2, "a rejection")
	if _, err := g.Cancel(ctx, cancelled, "agent"); err != nil {
		t.Fatal(err)
	}
	want(1, "a cancel")
	if _, err := g.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	want(1, "a sweep before the deadline")
	// Another instance expires the turn left alone; this one's sweep finds
	// no open turn, and drops the block all the same.
	clk.Set(clk.Now().Add(gate.DefaultApprovalTimeout))
	other := gate.New(rp, e.turns, gate.Options{})
	if n, err := other.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("the other instance's sweep: %d, %v; want the one turn expired", n, err)
	}
	want(1, "another instance's expiry")
	if _, err := g.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	want(0, "a sweep past the deadline")
}
