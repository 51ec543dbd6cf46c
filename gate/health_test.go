package gate_test

import (
	"context"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
)

// TestTurnsCountInTheirVersionsHealth: a turn whose code is a stored
// version's counts in that version's health, a success and a failure by
// its class (in the health only: no use, no frequency); a turn of other
// code under the same signature counts in none.
func TestTurnsCountInTheirVersionsHealth(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandbox.NewInProcess(), false)
	g := gate.New(e.Replayer, e.turns, gate.Options{})
	p := e.Capture(replaytest.ReadOnlyCode)
	turn := func(code string) gate.TurnStatus {
		t.Helper()
		ans, err := g.Submit(ctx, gate.TurnRequest{Code: code, SessionID: "s", Phase: audit.PhaseAutomatic,
			Arguments: map[string]any{"task_id": 7}, Actor: "agent"})
		if err != nil {
			t.Fatalf("submit: %v", err)
		}
		return ans.Turn.Status
	}
	if st := turn(replaytest.ReadOnlyCode); st != gate.TurnSucceeded {
		t.Fatalf("turn %s, want succeeded", st)
	}
	e.Upstream.Fail = map[string]string{"get_jobs": "down"}
	if st := turn(replaytest.ReadOnlyCode); st != gate.TurnFailed {
		t.Fatalf("turn %s, want failed", st)
	}
	if st := turn(replaytest.ReadOnlyCode + "\n\"another version\""); st != gate.TurnFailed {
		t.Fatalf("turn %s, want failed", st)
	}
	got := e.Get(p.Name)
	h := got.Health
	if h.Runs != 2 || h.Succeeded != 1 || h.Failures[health.FailureToolError] != 1 {
		t.Fatalf("health %+v, want the two turns of its code: a success and a tool error", h)
	}
	if got.UseCount != p.UseCount || got.Frequency != p.Frequency {
		t.Fatalf("use count %d→%d, frequency %d→%d: a turn's run counts in the health only", p.UseCount, got.UseCount, p.Frequency, got.Frequency)
	}
}

// TestTurnsCarryTheirRequester: a failed turn of a stored version's code
// counts toward its demotion streak as its requester's: one agent's
// failing turns are one caller, another agent's make two (a demotion
// needs two: docs/design.md "Health of each version").
func TestTurnsCarryTheirRequester(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandbox.NewInProcess(), false)
	g := gate.New(e.Replayer, e.turns, gate.Options{})
	p := e.Capture(replaytest.ReadOnlyCode)
	e.Upstream.Fail = map[string]string{"get_jobs": "down"}
	turn := func(actor string) {
		t.Helper()
		ans, err := g.Submit(ctx, gate.TurnRequest{Code: replaytest.ReadOnlyCode, SessionID: "s", Phase: audit.PhaseAutomatic,
			Arguments: map[string]any{"task_id": 7}, Actor: actor})
		if err != nil || ans.Turn.Status != gate.TurnFailed {
			t.Fatalf("submit: %+v, %v; want a failed turn", ans, err)
		}
	}
	turn("agent")
	turn("agent")
	if h := e.Get(p.Name).Health; h.DemotionStreak != 2 || h.StreakCallerCount() != 1 {
		t.Fatalf("one agent's two failed turns: streak %d by %d callers, want 2 by 1", h.DemotionStreak, h.StreakCallerCount())
	}
	turn("other")
	if h := e.Get(p.Name).Health; h.DemotionStreak != 3 || h.StreakCallerCount() != 2 {
		t.Fatalf("another agent's failed turn: streak %d by %d callers, want 3 by 2", h.DemotionStreak, h.StreakCallerCount())
	}
}
