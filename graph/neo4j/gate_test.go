package neo4jstore

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

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
	gate := func(s *Store) *replay.Gate {
		svc := procedures.NewService(s, procedures.Options{})
		rp := replay.New(svc, sandbox.NewInProcess(), disp, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}})
		return replay.NewGate(rp, replay.GateOptions{})
	}
	sa := freshStore(t)
	ctx := context.Background()
	cat := []procedures.Tool{{Name: "kill_job", InputSchema: map[string]any{"type": "object"}}}
	if _, err := procedures.NewService(sa, procedures.Options{}).PutCatalogue(ctx, cat, "tester"); err != nil {
		t.Fatal(err)
	}
	a, b := gate(sa), gate(openStore(t))

	type result struct {
		ans *replay.TurnAnswer
		err error
	}
	done := make(chan result, 1)
	go func() {
		ans, err := a.Submit(ctx, replay.TurnRequest{Code: "return tools.kill_job(panda_id=panda_id)", SessionID: "x",
			Phase: procedures.PhaseInteractive, Arguments: map[string]any{"panda_id": 1}, Wait: 20 * time.Second, Actor: "agent"})
		done <- result{ans, err}
	}()
	var id string
	for deadline := time.Now().Add(10 * time.Second); id == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		list, err := b.Approvals(ctx, procedures.ApprovalFilter{Status: procedures.TurnPending}, true)
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
	if _, _, err := b.Resolve(ctx, replay.ResolveRequest{ID: id, Choice: procedures.ChoiceRunOnce, Actor: "op", HasGrant: true}); err != nil {
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
	} else if procedures.ErrorCode(errB) != procedures.CodeConflict {
		t.Fatalf("run on B: %v", errB)
	}
	if ran != 1 || !slices.Equal(calls, []string{"kill_job"}) {
		t.Fatalf("ran %d times (A: %v, B: %v), upstream saw %v; want exactly once", ran, res.err, errB, calls)
	}
}
