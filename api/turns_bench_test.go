package api

import (
	"context"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/replay"
)

// BenchmarkTurnVsInvoke measures an automatic read-only turn end to end
// over HTTP (POST /v1/turns: analysis, classification, decision, run)
// against an invoke of the same code stored as a procedure, in the real
// worker pool, in the same run, and logs the ratio (aim: at most 1.2x).
func BenchmarkTurnVsInvoke(b *testing.B) {
	e, name := benchPoolEnv(b)
	c := benchClient(4)
	invoke := map[string]any{"arguments": map[string]any{"task_id": 7}, "phase": "automatic", "session_id": "bench"}
	turn := map[string]any{"code": readOnlyCode, "arguments": map[string]any{"task_id": 7}, "phase": "automatic", "session_id": "bench"}
	perOp := map[string]time.Duration{}
	b.Run("invoke", func(b *testing.B) {
		for b.Loop() {
			if st, data := e.do(b, c, "POST", "/v1/procedures/"+name+"/invoke", invoke); st != 200 {
				b.Fatalf("%d %s", st, data)
			}
		}
		perOp["invoke"] = b.Elapsed() / time.Duration(b.N)
	})
	b.Run("turn", func(b *testing.B) {
		for b.Loop() {
			if st, data := e.do(b, c, "POST", "/v1/turns", turn); st != 200 {
				b.Fatalf("%d %s", st, data)
			}
		}
		perOp["turn"] = b.Elapsed() / time.Duration(b.N)
	})
	if perOp["invoke"] > 0 {
		b.Logf("turn %v, invoke %v: turn/invoke = %.2fx", perOp["turn"], perOp["invoke"], float64(perOp["turn"])/float64(perOp["invoke"]))
	}
}

// BenchmarkApprovalRoundTrip measures the gate's own overhead on an
// approval, excluding the human: submit (pending, stored) → resolve →
// run, through the library on the embedded store, against the same turn
// decided at once (automatic, read-only), both in process; the difference
// is the approval round trip (aim: at most 5 ms).
func BenchmarkApprovalRoundTrip(b *testing.B) {
	e := mustEnv(b, envOpts{})
	ctx := context.Background()
	req := gate.TurnRequest{Code: readOnlyCode, Arguments: map[string]any{"task_id": 7}, SessionID: "bench", Actor: "agent"}
	perOp := map[string]time.Duration{}
	b.Run("direct", func(b *testing.B) {
		r := req
		r.Phase = audit.PhaseAutomatic
		for b.Loop() {
			if ans, err := e.gate.Submit(ctx, r); err != nil || !ans.Ran() {
				b.Fatal(err)
			}
		}
		perOp["direct"] = b.Elapsed() / time.Duration(b.N)
	})
	b.Run("approved", func(b *testing.B) {
		r := req
		r.Phase = audit.PhaseInteractive
		for b.Loop() {
			ans, err := e.gate.Submit(ctx, r)
			if err != nil || ans.Ran() {
				b.Fatal(err)
			}
			if _, _, err := e.gate.Resolve(ctx, gate.ResolveRequest{ID: ans.Turn.ID, Choice: gate.ChoiceRunOnce, Actor: "op", HasGrant: true}); err != nil {
				b.Fatal(err)
			}
			if ran, err := e.gate.Run(ctx, ans.Turn.ID, "agent"); err != nil || ran.Status != replay.StatusSucceeded {
				b.Fatal(err)
			}
		}
		perOp["approved"] = b.Elapsed() / time.Duration(b.N)
	})
	if perOp["direct"] > 0 {
		b.Logf("approved %v, direct %v: the approval round trip adds %v", perOp["approved"], perOp["direct"], perOp["approved"]-perOp["direct"])
	}
}
