package gate_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/recording"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
)

// TestTurnsKeepRecordings: with recordings kept, a successful turn whose
// code is a stored version's keeps a recording of that version; a captured
// turn keeps one of the version it was stored as (lifted: the literal is
// the recording's argument), which verifies against it; a failed turn, or
// a replayer that keeps none, keeps nothing.
func TestTurnsKeepRecordings(t *testing.T) {
	ctx := context.Background()
	const literalCode = `jobs = tools.get_jobs(task_id=42)
logs = tools.fetch_logs(task_id=42)
return {"jobs": jobs, "logs": logs}`
	setup := func(t *testing.T, record bool) (*env, *gate.Gate) {
		e := newEnv(t, sandbox.NewInProcess(), false)
		e.Replayer = replay.New(e.Service, sandbox.NewInProcess(), e.Upstream,
			replay.Options{RecordResponses: record, Limits: sandbox.Limits{Timeout: 20 * time.Second}})
		tools := slices.Clone(replaytest.DefaultTools)
		for i := range 2 {
			tools[i].InputSchema = map[string]any{"type": "object", "properties": map[string]any{"task_id": map[string]any{"type": "integer"}}}
		}
		if _, err := e.Service.PutCatalogue(ctx, tools, "tester"); err != nil {
			t.Fatal(err)
		}
		return e, gate.New(e.Replayer, e.turns, gate.Options{})
	}
	submit := func(t *testing.T, g *gate.Gate, code string, args map[string]any, capture bool) *gate.TurnAnswer {
		t.Helper()
		req := gate.TurnRequest{Code: code, SessionID: "s", Phase: audit.PhaseAutomatic, Arguments: args, Actor: "agent"}
		if capture {
			req.Capture, req.MayCapture = &gate.TurnCapture{Summary: "jobs and logs"}, true
		}
		ans, err := g.Submit(ctx, req)
		if err != nil {
			t.Fatalf("submit: %v", err)
		}
		return ans
	}
	verified := func(t *testing.T, rp *replay.Replayer, name, hash string, n int) {
		t.Helper()
		ans, err := rp.Verify(ctx, name, hash, "op")
		if err != nil || ans.Verification.Status != "passed" || ans.Verification.Recordings != n {
			t.Fatalf("Verify = %+v, %v; want %d recordings, passed", ans, err, n)
		}
	}

	t.Run("a stored version's code", func(t *testing.T) {
		e, g := setup(t, true)
		p := e.Capture(replaytest.ReadOnlyCode)
		if ans := submit(t, g, replaytest.ReadOnlyCode, map[string]any{"task_id": 7}, false); ans.Turn.Status != gate.TurnSucceeded {
			t.Fatalf("turn %s", ans.Turn.Status)
		}
		e.Upstream.Fail = map[string]string{"fetch_logs": "down"}
		if ans := submit(t, g, replaytest.ReadOnlyCode, map[string]any{"task_id": 8}, false); ans.Turn.Status != gate.TurnFailed {
			t.Fatalf("turn %s, want failed", ans.Turn.Status)
		}
		recs, _, err := e.Service.Recordings(ctx, p.Name, "", recording.MaxRecordingsPage, 0)
		if err != nil || len(recs) != 1 || recs[0].CodeHash != p.CodeHash || len(recs[0].Calls) != 2 {
			t.Fatalf("Recordings = %+v, %v; want the successful turn's, of the version", recs, err)
		}
		if id := recs[0].Arguments["task_id"]; id != int64(7) && id != float64(7) {
			t.Fatalf("recorded arguments %v, want the turn's", recs[0].Arguments)
		}
		verified(t, e.Replayer, p.Name, p.CodeHash, 1)
	})

	t.Run("captured, lifted", func(t *testing.T) {
		e, g := setup(t, true)
		ans := submit(t, g, literalCode, nil, true)
		if ans.Turn.Status != gate.TurnSucceeded || ans.Procedure == nil || len(ans.Lifted) != 2 {
			t.Fatalf("turn %s, procedure %v, lifted %v; want succeeded, captured, task_id lifted at both calls", ans.Turn.Status, ans.Procedure, ans.Lifted)
		}
		p := e.Get(ans.Procedure.Name)
		if p.CodeHash == ans.Turn.CodeHash {
			t.Fatalf("the captured version is the turn's code (%s): nothing was lifted", p.CodeHash)
		}
		recs, _, err := e.Service.Recordings(ctx, p.Name, "", recording.MaxRecordingsPage, 0)
		if err != nil || len(recs) != 1 || recs[0].CodeHash != p.CodeHash {
			t.Fatalf("Recordings = %+v, %v; want one of the lifted version %s", recs, err, p.CodeHash)
		}
		if id := recs[0].Arguments[ans.Lifted[0].Parameter]; id != int64(42) && id != float64(42) {
			t.Fatalf("recorded arguments %v, want the lifted literal", recs[0].Arguments)
		}
		if p.Health.Runs != 1 || p.Health.Succeeded != 1 {
			t.Fatalf("health %+v, want the turn that stored it", p.Health)
		}
		verified(t, e.Replayer, p.Name, p.CodeHash, 1)
	})

	t.Run("recordings off", func(t *testing.T) {
		e, g := setup(t, false)
		p := e.Capture(replaytest.ReadOnlyCode)
		submit(t, g, replaytest.ReadOnlyCode, map[string]any{"task_id": 7}, false)
		submit(t, g, literalCode, nil, true)
		if recs, _, err := e.Service.Recordings(ctx, p.Name, "", recording.MaxRecordingsPage, 0); err != nil || len(recs) != 0 {
			t.Fatalf("Recordings = %+v, %v; want none", recs, err)
		}
	})
}
