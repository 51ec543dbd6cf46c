package gate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/sandbox"
)

// TestTurnToolArgumentsCheckedAtCallTime: a turn whose literal breaks the
// tool's input_schema (task_id=99999 over maximum 10) is allowed (read-only)
// but its call never reaches the upstream; the turn fails
// invalid_arguments, its decision records that result, and the stored
// version of the same code counts nothing in its health.
func TestTurnToolArgumentsCheckedAtCallTime(t *testing.T) {
	ctx := context.Background()
	const code = "return tools.get_jobs(task_id=99999)"
	e := newEnv(t, sandbox.NewInProcess(), false)
	if _, err := e.Service.PutCatalogue(ctx, []procedures.Tool{{Name: "get_jobs", ReadOnly: true, InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"task_id": map[string]any{"type": "integer", "maximum": 10}}}}}, "tester"); err != nil {
		t.Fatal(err)
	}
	p := e.Capture(code)
	g := gate.New(e.Replayer, e.turns, gate.Options{})
	for i := 0; i < health.DefaultDemoteAfter+1; i++ {
		ans, err := g.Submit(ctx, gate.TurnRequest{Code: code, SessionID: "s", Phase: audit.PhaseAutomatic, Actor: "agent"})
		if err != nil {
			t.Fatalf("submit: %v", err)
		}
		if ans.Turn.Status != gate.TurnFailed || ans.InvokeResult == nil || ans.Error == nil || ans.Error.Code != sandbox.InvalidArguments {
			t.Fatalf("turn %s, answer %+v; want failed invalid_arguments", ans.Turn.Status, ans.InvokeResult)
		}
		if strings.Contains(ans.Error.Message, "99999") {
			t.Fatalf("the error quotes the value: %q", ans.Error.Message)
		}
		if ans.Decision.Result != health.FailureInvalidArguments {
			t.Fatalf("the turn's decision has result %q", ans.Decision.Result)
		}
	}
	if calls := e.Upstream.Calls(); len(calls) != 0 {
		t.Fatalf("the upstream saw %+v", calls)
	}
	ds, err := e.Service.Decisions(ctx, audit.DecisionFilter{Kind: audit.KindTurn})
	if err != nil || len(ds) != health.DefaultDemoteAfter+1 {
		t.Fatalf("turn decisions %+v, %v", ds, err)
	}
	for _, d := range ds {
		if d.Outcome != audit.Allowed || d.Result != health.FailureInvalidArguments {
			t.Fatalf("audit record %+v, want allowed with result invalid_arguments", d)
		}
	}
	if got := e.Get(p.Name); got.Health.Runs != 0 || got.Demoted {
		t.Fatalf("health %+v, demoted %v: a call refused for its arguments counts in no health", got.Health, got.Demoted)
	}
}
