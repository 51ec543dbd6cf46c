package neo4j

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/graph/storetest"
)

// TestTwoInstancesOneTurn: a turn created on one instance is resolved on
// the other, and of concurrent runners on both exactly one starts it.
func TestTwoInstancesOneTurn(t *testing.T) {
	a := freshStore(t)
	b := openStore(t)
	now := time.Now()
	r := storetest.PendingTurn("s1", now, time.Minute)
	if err := a.CreateApproval(t.Context(), r, gate.PendingBounds{Total: 4}, now); err != nil {
		t.Fatal(err)
	}
	approved := r
	approved.Status = gate.TurnApproved
	if _, err := b.TransitionTurn(t.Context(), approved, []gate.TurnStatus{gate.TurnPending}, true, now); err != nil {
		t.Fatalf("resolve on the second instance: %v", err)
	}
	got, err := a.GetApproval(t.Context(), r.ID)
	if err != nil || got.Status != gate.TurnApproved {
		t.Fatalf("the first instance sees %+v, %v", got, err)
	}
	var runs atomic.Int64
	var wg sync.WaitGroup
	for i := range 8 {
		s := []*Store{a, b}[i%2]
		wg.Go(func() {
			next := approved
			next.Status = gate.TurnRunning
			if _, err := s.TransitionTurn(t.Context(), next, []gate.TurnStatus{gate.TurnApproved}, true, now); err == nil {
				runs.Add(1)
			} else if fault.ErrorCode(err) != fault.CodeConflict {
				t.Errorf("claim: %v", err)
			}
		})
	}
	wg.Wait()
	if runs.Load() != 1 {
		t.Fatalf("%d instances started the turn, want exactly 1", runs.Load())
	}
}
