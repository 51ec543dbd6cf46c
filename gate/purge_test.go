package gate_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/gate"

	"github.com/procgraph/procgraph/sandbox"
)

// TestDeadRunIsPurged: a turn claimed running by an instance that died
// before marking it done keeps its code and argument values only until its
// deadline; past it, reading the turn (one approval, or the list) empties it
// in the store. It stays running: its outcome is unknown.
func TestDeadRunIsPurged(t *testing.T) {
	for _, path := range []string{"approval", "approvals", "turn"} {
		t.Run(path, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, sandbox.NewInProcess(), false)
			var mu sync.Mutex
			now := time.Now()
			e.WithClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
			g := gate.New(e.Replayer, e.turns, gate.Options{})
			ans, err := g.Submit(ctx, gate.TurnRequest{Code: "return tools.kill_job(panda_id=panda_id)", SessionID: "s",
				Phase: audit.PhaseInteractive, Arguments: map[string]any{"panda_id": 7}, Actor: "agent"})
			if err != nil || ans.Turn.Status != gate.TurnPending {
				t.Fatalf("submit: %+v, %v", ans, err)
			}
			id := ans.Turn.ID
			if _, _, err := g.Resolve(ctx, gate.ResolveRequest{ID: id, Choice: gate.ChoiceRunOnce, Actor: "op", HasGrant: true}); err != nil {
				t.Fatal(err)
			}
			// The requester's instance claims the run, then dies.
			cur, err := e.turns.GetApproval(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			claimed := *cur
			claimed.Status = gate.TurnRunning
			if _, err := e.turns.TransitionTurn(ctx, claimed, []gate.TurnStatus{gate.TurnApproved}, true, now); err != nil {
				t.Fatal(err)
			}
			read := func() *gate.TurnRecord {
				t.Helper()
				switch path {
				case "approval":
					a, err := g.Approval(ctx, id, true)
					if err != nil {
						t.Fatal(err)
					}
					return &gate.TurnRecord{Turn: a.Turn, Code: a.Code, Arguments: a.Arguments}
				case "approvals":
					as, err := g.Approvals(ctx, gate.ApprovalFilter{}, true)
					if err != nil || len(as) != 1 {
						t.Fatalf("approvals: %v, %v", as, err)
					}
					return &gate.TurnRecord{Turn: as[0].Turn, Code: as[0].Code, Arguments: as[0].Arguments}
				}
				if _, err := g.Get(ctx, id, "agent", 0); err != nil {
					t.Fatal(err)
				}
				return nil
			}
			read()
			if stored, _ := e.turns.GetApproval(ctx, id); !stored.HoldsValues() {
				t.Fatal("a running turn before its deadline lost its code")
			}
			mu.Lock()
			now = cur.Deadline.Add(time.Second)
			mu.Unlock()
			if r := read(); r != nil && (r.Code != "" || r.Arguments != nil || r.Status != gate.TurnRunning) {
				t.Fatalf("read past the deadline: status %s, code %q, arguments %v", r.Status, r.Code, r.Arguments)
			}
			stored, err := e.turns.GetApproval(ctx, id)
			if err != nil || stored.HoldsValues() || stored.Status != gate.TurnRunning {
				t.Fatalf("stored past the deadline: %+v, %v", stored, err)
			}
			if calls := e.Upstream.Calls(); len(calls) != 0 {
				t.Fatalf("the upstream saw %v", calls)
			}
		})
	}
}
