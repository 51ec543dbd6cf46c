package replay_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
)

// boundedTools is DefaultTools with an input_schema on get_jobs:
// task_id an integer of at most 10.
func boundedTools() []procedures.Tool {
	return []procedures.Tool{
		{Name: "get_jobs", ReadOnly: true, InputSchema: map[string]any{"type": "object",
			"properties": map[string]any{"task_id": map[string]any{"type": "integer", "maximum": 10}}, "required": []any{"task_id"}}},
		{Name: "fetch_logs", ReadOnly: true},
		{Name: "kill_job"},
		{Name: "restart_job"},
	}
}

// TestToolArgumentsCheckedAtCallTime: a tool call whose arguments break
// the tool's input_schema (a literal over its maximum, which no typed
// parameter guards) never reaches the upstream: the run fails
// invalid_arguments, told without the value; the run is not counted in
// the procedure's health (however often it fails, nothing is demoted),
// and its decision records the result. A call within the schema runs.
func TestToolArgumentsCheckedAtCallTime(t *testing.T) {
	ctx := context.Background()
	for _, rn := range runners() {
		t.Run(rn.name, func(t *testing.T) {
			e := newEnv(t, rn.r, false)
			if _, err := e.Service.PutCatalogue(ctx, boundedTools(), "tester"); err != nil {
				t.Fatal(err)
			}
			bad := e.Capture("return tools.get_jobs(task_id=99999)")
			if len(bad.Parameters) != 0 {
				t.Fatalf("the literal over the schema's maximum was lifted: %v", bad.Parameters)
			}
			for i := 0; i < health.DefaultDemoteAfter+1; i++ {
				res, err := e.Invoke(replay.InvokeRequest{Name: bad.Name, Phase: audit.PhaseAutomatic, Actor: "agent"})
				if err != nil {
					t.Fatalf("invoke: %v", err)
				}
				if res.Status != replay.StatusFailed || res.Error == nil || res.Error.Code != sandbox.InvalidArguments || res.Error.Tool != "get_jobs" {
					t.Fatalf("invoke: status %s, error %+v; want failed invalid_arguments on get_jobs", res.Status, res.Error)
				}
				if strings.Contains(res.Error.Message, "99999") || !strings.Contains(res.Error.Message, "maximum") {
					t.Fatalf("the error %q quotes the value or does not name the keyword", res.Error.Message)
				}
				if res.Decision.Result != health.FailureInvalidArguments {
					t.Fatalf("the answer's decision has result %q", res.Decision.Result)
				}
			}
			if calls := e.Upstream.Calls(); len(calls) != 0 {
				t.Fatalf("the upstream saw %+v", calls)
			}
			got := e.Get(bad.Name)
			if got.Health.Runs != 0 || got.Health.Failed != 0 || got.Health.ConsecutiveFailures != 0 || got.Demoted {
				t.Fatalf("health %+v, demoted %v: a call refused for its arguments counts in no health", got.Health, got.Demoted)
			}
			for _, d := range e.Decisions(bad.Name) {
				if d.Outcome != audit.Allowed || d.Result != health.FailureInvalidArguments {
					t.Fatalf("audit record %+v, want allowed with result invalid_arguments", d)
				}
			}

			co, err := e.Service.Capture(ctx, procedures.CaptureRequest{Code: "tools.fetch_logs(task_id=7)\nreturn tools.get_jobs(task_id=7)",
				Status: procedures.StatusSucceeded, NoLift: true})
			if err != nil {
				t.Fatal(err)
			}
			good := co.Procedure
			res := e.MustSucceed(replay.InvokeRequest{Name: good.Name, Phase: audit.PhaseAutomatic, Actor: "agent"})
			if res.Decision.Result != health.ResultSucceeded || len(e.Upstream.Calls()) != 2 {
				t.Fatalf("decision %+v, upstream %+v", res.Decision, e.Upstream.Calls())
			}
			if ds := e.Decisions(good.Name); len(ds) != 1 || ds[0].Result != health.ResultSucceeded {
				t.Fatalf("audit %+v, want one record with result succeeded", ds)
			}
		})
	}
}

// TestInvokeArgumentErrorsQuoteNoValue: an invoke whose arguments break
// the typed schema (422, nothing decided) is told which keyword and where,
// never the value.
func TestInvokeArgumentErrorsQuoteNoValue(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandbox.NewInProcess(), false)
	if _, err := e.Service.PutCatalogue(ctx, boundedTools(), "tester"); err != nil {
		t.Fatal(err)
	}
	p := e.Capture("return tools.get_jobs(task_id=task_id)")
	_, err := e.Invoke(replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 8675309}})
	var fe *fault.Error
	if fault.ErrorCode(err) != fault.CodeInvalidArguments || !errors.As(err, &fe) {
		t.Fatalf("invoke: %v, want invalid_arguments", err)
	}
	text := fe.Message
	for _, v := range fe.Details["errors"].([]replay.ArgumentError) {
		text += " " + v.Path + " " + v.Message + " " + v.Keyword + " " + v.KeywordLocation
	}
	if strings.Contains(text, "8675309") || !strings.Contains(text, "maximum") || !strings.Contains(text, "/task_id") {
		t.Fatalf("the 422 says %q: it quotes the value, or does not name the keyword and the argument", text)
	}
	if len(e.Upstream.Calls()) != 0 {
		t.Fatal("a refused invoke reached the upstream")
	}
}
