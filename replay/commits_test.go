package replay_test

import (
	"context"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
)

// TestInvokeCommitsOnce (docs/design.md "One commit per run"): an invoke
// of a read-only procedure commits once, after its run — its decision
// with its result, the use, the health and the recording together — and
// a state-changing one twice: its decision before the first tool call
// (the dispatcher finds it stored), the rest after.
func TestInvokeCommitsOnce(t *testing.T) {
	e := newEnv(t, sandbox.NewInProcess(), true)
	e.Replayer = replay.New(e.Service, sandbox.NewInProcess(), e.Upstream,
		replay.Options{RecordResponses: true, Limits: sandbox.Limits{Timeout: 20 * time.Second}})
	ro, sc := e.Capture(replaytest.ReadOnlyCode), e.Capture(replaytest.StateChangingCode)
	for _, c := range []struct {
		name    string
		p       *procedures.Procedure
		req     replay.InvokeRequest
		commits int64
		first   bool // the decision is stored before the first tool call
	}{
		{"read_only", ro, replay.InvokeRequest{Phase: audit.PhaseAutomatic, SessionID: "s-1"}, 1, false},
		{"state_changing", sc, replay.InvokeRequest{Phase: audit.PhaseInteractive, SessionID: "s-1",
			ReviewedBy: "op", ReviewerHasGrantScope: true}, 2, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(e.Decisions(c.p.Name))
			seen := -1
			e.Upstream.OnCall = func(string) {
				if seen < 0 {
					seen = len(e.Decisions(c.p.Name)) - before
				}
			}
			defer func() { e.Upstream.OnCall = nil }()
			c.req.Name, c.req.Arguments = c.p.Name, map[string]any{"task_id": 1}
			n := e.Store.Commits()
			res := e.MustSucceed(c.req)
			if got := e.Store.Commits() - n; got != c.commits {
				t.Fatalf("%d commits, want %d", got, c.commits)
			}
			if want := map[bool]int{true: 1, false: 0}[c.first]; seen != want {
				t.Fatalf("%d records stored when the first tool was called, want %d", seen, want)
			}
			ds := e.Decisions(c.p.Name)
			if len(ds) != before+1 || ds[0].ID != res.Decision.ID || ds[0].Result != health.ResultSucceeded {
				t.Fatalf("records %+v, want %s with its result", ds, res.Decision.ID)
			}
			p := e.Get(c.p.Name)
			if p.UseCount != 1 || p.Health.Runs != 1 {
				t.Fatalf("use count %d, health %+v", p.UseCount, p.Health)
			}
			if recs, n, err := e.Service.Recordings(context.Background(), c.p.Name, "", 10, 0); err != nil || n != 1 || len(recs) != 1 {
				t.Fatalf("recordings %d, %v", n, err)
			}
		})
	}
}
