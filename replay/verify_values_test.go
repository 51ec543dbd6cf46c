package replay_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
)

// TestVerifyDetailQuotesNoRecordedValue: a recorded response
// ({"pin": 8675309}) passed on as a later call's argument, whose schema an
// admin then narrows (maximum 100), makes the verification invalid_call;
// what the verifier is told names the call, the tool and the keyword,
// never the recorded value (verify needs only invoke; recordings need
// grant).
func TestVerifyDetailQuotesNoRecordedValue(t *testing.T) {
	ctx := context.Background()
	e := replaytest.New(t, sandbox.NewInProcess(), false)
	jobs := func(maximum any) []procedures.Tool {
		task := map[string]any{"type": "integer"}
		if maximum != nil {
			task["maximum"] = maximum
		}
		return []procedures.Tool{{Name: "get_pin", ReadOnly: true},
			{Name: "get_jobs", ReadOnly: true, InputSchema: map[string]any{"type": "object", "properties": map[string]any{"task_id": task}}}}
	}
	if _, err := e.Service.PutCatalogue(ctx, jobs(nil), "admin"); err != nil {
		t.Fatal(err)
	}
	up := replay.NewFuncDispatcher(map[string]replay.ToolFunc{
		"get_pin":  func(context.Context, map[string]any) (any, error) { return map[string]any{"pin": 8675309}, nil },
		"get_jobs": func(context.Context, map[string]any) (any, error) { return []any{}, nil },
	})
	rp := replay.New(e.Service, sandbox.NewInProcess(), up, replay.Options{RecordResponses: true, Limits: sandbox.Limits{Timeout: 20 * time.Second}})
	p := e.Capture("pin = tools.get_pin()\nreturn tools.get_jobs(task_id=pin[\"pin\"])")
	if res, err := rp.Invoke(ctx, replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseAutomatic}); err != nil || res.Status != replay.StatusSucceeded {
		t.Fatalf("Invoke = %+v, %v", res, err)
	}
	if _, err := e.Service.PutCatalogue(ctx, jobs(100), "admin"); err != nil {
		t.Fatal(err)
	}
	ans, err := rp.Verify(ctx, p.Name, "", "agent")
	if err != nil || len(ans.Results) != 1 {
		t.Fatalf("Verify = %+v, %v", ans, err)
	}
	r := ans.Results[0]
	if r.Outcome != replay.VerifyInvalidCall || r.Call == nil || *r.Call != 1 {
		t.Fatalf("result %+v, want invalid_call at call 1", r)
	}
	if strings.Contains(r.Detail, "8675309") || !strings.Contains(r.Detail, "maximum") || !strings.Contains(r.Detail, "get_jobs") {
		t.Fatalf("detail %q: it quotes the recorded value, or does not name the tool and keyword", r.Detail)
	}
}
