package gate_test

import (
	"context"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
)

// TestAutomaticTurnCommitsOnce (docs/design.md "One commit per run"): an
// automatic read-only turn commits once, after its run: its decision with
// its result, and the run in the health of the stored version of its
// code, together; nothing of it is stored while it runs.
func TestAutomaticTurnCommitsOnce(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandbox.NewInProcess(), false)
	p := e.Capture(replaytest.ReadOnlyCode)
	g := gate.New(e.Replayer, e.turns, gate.Options{})
	seen := -1
	e.Upstream.OnCall = func(string) {
		if seen < 0 {
			ds, _ := e.Service.Decisions(ctx, audit.DecisionFilter{Kind: audit.KindTurn})
			seen = len(ds)
		}
	}
	n := e.Store.Commits()
	ans, err := g.Submit(ctx, gate.TurnRequest{Code: replaytest.ReadOnlyCode, SessionID: "s", Phase: audit.PhaseAutomatic,
		Arguments: map[string]any{"task_id": 1}, Actor: "agent"})
	if err != nil || !ans.Ran() || ans.Status != replay.StatusSucceeded {
		t.Fatalf("submit: %+v, %v", ans, err)
	}
	if got := e.Store.Commits() - n; got != 1 {
		t.Fatalf("%d commits, want 1", got)
	}
	if seen != 0 {
		t.Fatalf("%d records stored while the turn ran, want 0 (stored with its run)", seen)
	}
	ds, err := e.Service.Decisions(ctx, audit.DecisionFilter{Kind: audit.KindTurn})
	if err != nil || len(ds) != 1 || ds[0].ID != ans.Decision.ID || ds[0].Result != health.ResultSucceeded {
		t.Fatalf("turn records %+v, %v", ds, err)
	}
	if got := e.Get(p.Name); got.Health.Runs != 1 {
		t.Fatalf("health %+v, want the turn's run", got.Health)
	}
}

// TestApprovedTurnClaimIsDurableFirst: an approved turn's claim and its
// decision are committed before the first tool call (the at-most-once
// rule: a crash mid-run leaves it running, never approved again), and the
// rest once after the run: the turn marked done with its decision's
// result, two commits in all.
func TestApprovedTurnClaimIsDurableFirst(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandbox.NewInProcess(), false)
	g := gate.New(e.Replayer, e.turns, gate.Options{})
	id := mustPending(t, g, turnKill(0))
	if _, _, err := g.Resolve(ctx, gate.ResolveRequest{ID: id, Choice: gate.ChoiceRunOnce, Actor: "op", HasGrant: true}); err != nil {
		t.Fatal(err)
	}
	var status gate.TurnStatus
	var approved []audit.Decision
	e.Upstream.OnCall = func(string) {
		cur, err := e.turns.GetApproval(ctx, id)
		if err != nil {
			t.Error(err)
			return
		}
		status = cur.Status
		approved, _ = e.Service.Decisions(ctx, audit.DecisionFilter{Kind: audit.KindTurn, Outcome: audit.Allowed})
	}
	n := e.Store.Commits()
	ans, err := g.Run(ctx, id, "agent")
	if err != nil || ans.Status != replay.StatusSucceeded {
		t.Fatalf("run: %+v, %v", ans, err)
	}
	if got := e.Store.Commits() - n; got != 2 {
		t.Fatalf("%d commits, want 2 (the claim, then the run)", got)
	}
	if cur, err := e.turns.GetApproval(ctx, id); err != nil || cur.Status != gate.TurnSucceeded {
		t.Fatalf("after the run: %+v, %v", cur, err)
	}
	if status != gate.TurnRunning || len(approved) != 1 || approved[0].ID != ans.Decision.ID || approved[0].Result != "" {
		t.Fatalf("while it ran: turn %s, records %+v; want running and its decision stored", status, approved)
	}
	ds, err := e.Service.Decisions(ctx, audit.DecisionFilter{Kind: audit.KindTurn, Outcome: audit.Allowed})
	if err != nil || len(ds) != 1 || ds[0].Result != health.ResultSucceeded {
		t.Fatalf("records %+v, %v", ds, err)
	}
}
