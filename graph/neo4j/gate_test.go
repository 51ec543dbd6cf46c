package neo4j

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
)

// TestGateAcrossInstances: two procgraph instances (each its own Store,
// Service, Replayer and Gate) on one Neo4j. An agent's turn waits on A; an
// operator resolves it on B; A sees it through the store and runs it —
// once, even when the agent also asks B to run it.
func TestGateAcrossInstances(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	disp := replay.DispatcherFunc(func(_ context.Context, tool string, _ map[string]any) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, tool)
		return map[string]any{"ok": true}, nil
	})
	newGate := func(s *Store) *gate.Gate {
		svc := procedures.NewService(s, procedures.Options{})
		rp := replay.New(svc, sandbox.NewInProcess(), disp, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}})
		return gate.New(rp, s, gate.Options{})
	}
	sa := freshStore(t)
	ctx := context.Background()
	cat := []procedures.Tool{{Name: "kill_job", InputSchema: map[string]any{"type": "object"}}}
	if _, err := procedures.NewService(sa, procedures.Options{}).PutCatalogue(ctx, cat, "tester"); err != nil {
		t.Fatal(err)
	}
	a, b := newGate(sa), newGate(openStore(t))

	type result struct {
		ans *gate.TurnAnswer
		err error
	}
	done := make(chan result, 1)
	go func() {
		ans, err := a.Submit(ctx, gate.TurnRequest{Code: "return tools.kill_job(panda_id=panda_id)", SessionID: "x",
			Phase: audit.PhaseInteractive, Arguments: map[string]any{"panda_id": 1}, Wait: 20 * time.Second, Actor: "agent"})
		done <- result{ans, err}
	}()
	var id string
	for deadline := time.Now().Add(10 * time.Second); id == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		list, err := b.Approvals(ctx, gate.ApprovalFilter{Status: gate.TurnPending}, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == 1 {
			id = list[0].ID
		}
	}
	if id == "" {
		t.Fatal("instance B never saw the pending turn")
	}
	if _, _, err := b.Resolve(ctx, gate.ResolveRequest{ID: id, Choice: gate.ChoiceRunOnce, Actor: "op", HasGrant: true}); err != nil {
		t.Fatal(err)
	}
	_, errB := b.Run(ctx, id, "agent") // races A's waiting submit
	res := <-done
	ran := 0
	if res.err == nil && res.ans.Ran() {
		ran++
	}
	if errB == nil {
		ran++
	} else if fault.ErrorCode(errB) != fault.CodeConflict {
		t.Fatalf("run on B: %v", errB)
	}
	if ran != 1 || !slices.Equal(calls, []string{"kill_job"}) {
		t.Fatalf("ran %d times (A: %v, B: %v), upstream saw %v; want exactly once", ran, res.err, errB, calls)
	}
}

// TestSweepAcrossInstances: two instances sweep one Neo4j at once, over
// more turns than one page of the list: runs claimed by an instance that
// died long ago, and approvals nobody read again. Each lost run is ended
// once (failed, no code or arguments, one run_lost decision each) and each
// approval expired once (one approval_expired decision each), whichever
// instance got there first.
func TestSweepAcrossInstances(t *testing.T) {
	ctx := context.Background()
	newGate := func(s *Store) *gate.Gate {
		svc := procedures.NewService(s, procedures.Options{})
		return gate.New(replay.New(svc, sandbox.NewInProcess(), replay.DispatcherFunc(func(context.Context, string, map[string]any) (any, error) {
			t.Error("a sweep dispatched a call")
			return nil, nil
		}), replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}}), s, gate.Options{})
	}
	sa := freshStore(t)
	a, b := newGate(sa), newGate(openStore(t))
	at := time.Now().Add(-2 * time.Hour) // deadlines and runs long past
	const running, pending = gate.MaxApprovalLimit + 20, 30
	for i := range running + pending {
		r := storetest.PendingTurn("s", at.Add(time.Duration(i)*time.Millisecond), gate.DefaultApprovalTimeout)
		storetest.MustCreateApproval(t, sa, r, running+pending, at)
		for _, st := range []gate.TurnStatus{gate.TurnApproved, gate.TurnRunning} {
			if i >= running {
				break
			}
			from := r.Status
			r.Status = st
			if _, err := sa.TransitionTurn(ctx, r, []gate.TurnStatus{from}, true, at); err != nil {
				t.Fatal(err)
			}
		}
	}
	var wg sync.WaitGroup
	counts, errs := make([]int, 2), make([]error, 2)
	for i, g := range []*gate.Gate{a, b} {
		wg.Add(1)
		go func() { defer wg.Done(); counts[i], errs[i] = g.Sweep(ctx) }()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil || counts[0]+counts[1] != running+pending {
		t.Fatalf("sweeps changed %v (%v), want %d in all", counts, errs, running+pending)
	}
	storetest.RequireSwept(t, procedures.NewService(sa, procedures.Options{}), sa, running, pending)
}
