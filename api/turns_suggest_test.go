package api

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/reuse"
)

// TestTurnSuggestsReuse: a turn whose tools an exposed procedure already
// composes — exactly, or among more — names that proc__ tool in its answer
// (reuse before regenerate), whether it ran (200) or waits for an operator
// (202); a turn no exposed procedure covers carries none; the decision is
// the same either way.
func TestTurnSuggestsReuse(t *testing.T) {
	e := mustEnv(t, envOpts{})
	ctx := context.Background()
	out, err := e.svc.Capture(ctx, procedures.CaptureRequest{Code: readOnlyCode, SessionID: "setup"})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Procedure.Exposed {
		t.Fatalf("%s is not exposed: the test needs an exposed procedure", out.Procedure.Name)
	}
	name := out.Procedure.Name
	for _, tc := range []struct {
		name, code, phase string
		status            int
		tool, reason      string
	}{
		{"same tools, reformatted, automatic", "jobs  = tools.get_jobs(task_id=task_id)\n\nlogs = tools.fetch_logs(task_id=task_id)\nreturn [jobs, logs]", "automatic", http.StatusOK, name, reuse.SuggestSameSignature},
		{"fewer tools, interactive", "return tools.get_jobs(task_id=task_id)", "interactive", http.StatusAccepted, name, reuse.SuggestCoveredBy},
		{"a tool nobody composes", "return tools.kill_job(task_id=task_id)", "interactive", http.StatusAccepted, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, body := e.do(t, http.DefaultClient, "POST", "/v1/turns", map[string]any{
				"code": tc.code, "session_id": "s-" + tc.name, "phase": tc.phase, "arguments": map[string]any{"task_id": 3}})
			var ans struct {
				Suggestion *reuse.Suggestion `json:"suggestion"`
				Decision   *audit.Decision   `json:"decision"`
			}
			if err := json.Unmarshal(body, &ans); err != nil || st != tc.status {
				t.Fatalf("POST /v1/turns: %d %s (%v); want %d", st, body, err, tc.status)
			}
			switch {
			case tc.tool == "" && ans.Suggestion != nil:
				t.Fatalf("suggestion %+v, want none", ans.Suggestion)
			case tc.tool != "" && (ans.Suggestion == nil || ans.Suggestion.Tool != tc.tool || ans.Suggestion.Reason != tc.reason || ans.Suggestion.Message == ""):
				t.Fatalf("suggestion %+v, want %s (%s)", ans.Suggestion, tc.tool, tc.reason)
			}
			if tc.status == http.StatusOK && (ans.Decision == nil || ans.Decision.Reason != audit.ReasonReadOnly) {
				t.Fatalf("decision %+v, want read_only: a suggestion changes nothing decided", ans.Decision)
			}
		})
	}
}
