package gate_test

import (
	"context"
	"testing"

	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/procedures"
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
		ans, err := g.Submit(ctx, gate.TurnRequest{Code: code, SessionID: "s", Phase: procedures.PhaseAutomatic,
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
	if h.Runs != 2 || h.Succeeded != 1 || h.Failures[procedures.FailureToolError] != 1 {
		t.Fatalf("health %+v, want the two turns of its code: a success and a tool error", h)
	}
	if got.UseCount != p.UseCount || got.Frequency != p.Frequency {
		t.Fatalf("use count %d→%d, frequency %d→%d: a turn's run counts in the health only", p.UseCount, got.UseCount, p.Frequency, got.Frequency)
	}
}
