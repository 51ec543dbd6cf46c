package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/procedures"
)

// TestRetireRoundTrip: an admin retires a procedure over HTTP; it leaves
// the planner view and the exposed list, stays listed with its state for
// analysts, and an invoke is denied with reason retired; DELETE brings it
// back. Both changes are retire decisions in the audit log.
func TestRetireRoundTrip(t *testing.T) {
	e := mustEnv(t, envOpts{})
	out, err := e.svc.Capture(context.Background(), procedures.CaptureRequest{Code: readOnlyCode, SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	name := out.Procedure.Name
	p := "/v1/procedures/" + name
	c := http.DefaultClient
	planner := func() []string {
		t.Helper()
		code, body := e.do(t, c, "GET", "/v1/procedures/tools", nil)
		var a struct {
			Tools []struct{ Name string } `json:"tools"`
		}
		if code != 200 || json.Unmarshal(body, &a) != nil {
			t.Fatalf("planner view: %d %s", code, body)
		}
		var names []string
		for _, tl := range a.Tools {
			names = append(names, tl.Name)
		}
		return names
	}
	exposedTotal := func() int {
		t.Helper()
		code, body := e.do(t, c, "GET", "/v1/procedures?exposed=true", nil)
		var a struct{ Total int }
		if code != 200 || json.Unmarshal(body, &a) != nil {
			t.Fatalf("exposed list: %d %s", code, body)
		}
		return a.Total
	}
	if got := planner(); len(got) != 1 || exposedTotal() != 1 {
		t.Fatalf("before: planner %v", got)
	}

	code, body := e.do(t, c, "PUT", p+"/retirement", map[string]any{"reason": "superseded by a better one"})
	var ans struct {
		Procedure struct {
			Exposed bool                   `json:"exposed"`
			Retired *procedures.Retirement `json:"retired"`
		} `json:"procedure"`
		Decision audit.Decision `json:"decision"`
	}
	if code != 200 || json.Unmarshal(body, &ans) != nil {
		t.Fatalf("PUT retirement: %d %s", code, body)
	}
	if ans.Procedure.Exposed || ans.Procedure.Retired == nil || ans.Procedure.Retired.Reason != "superseded by a better one" ||
		ans.Decision.Kind != audit.KindRetire || ans.Decision.Reason != audit.ReasonRetired || ans.Decision.Note != "superseded by a better one" {
		t.Fatalf("PUT retirement answered %s", body)
	}
	if got := planner(); len(got) != 0 || exposedTotal() != 0 {
		t.Fatalf("retired: planner %v, exposed total %d; want none", got, exposedTotal())
	}
	code, body = e.do(t, c, "GET", p, nil)
	if code != 200 || !strings.Contains(string(body), `"retired":{"retired_by":`) || !strings.Contains(string(body), `"exposed":false`) {
		t.Fatalf("GET retired procedure: %d %s", code, body)
	}
	code, body = e.do(t, c, "POST", p+"/invoke", map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "automatic"})
	if code != http.StatusForbidden || !strings.Contains(string(body), `"reason":"retired"`) || !strings.Contains(string(body), "retired this procedure") {
		t.Fatalf("invoke of a retired procedure: %d %s", code, body)
	}

	code, body = e.do(t, c, "DELETE", p+"/retirement", nil)
	if code != 200 || !strings.Contains(string(body), `"retired":null`) || !strings.Contains(string(body), `"reason":"unretired"`) {
		t.Fatalf("DELETE retirement: %d %s", code, body)
	}
	if got := planner(); len(got) != 1 {
		t.Fatalf("brought back: planner %v", got)
	}
	code, body = e.do(t, c, "POST", p+"/invoke", map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "automatic"})
	if code != 200 {
		t.Fatalf("invoke after bringing back: %d %s", code, body)
	}
	code, body = e.do(t, c, "GET", "/v1/decisions?kind=retire", nil)
	if code != 200 || strings.Count(string(body), `"kind":"retire"`) != 2 {
		t.Fatalf("retire decisions: %d %s", code, body)
	}
}

// TestRetireRefusals: bad bodies and unknown procedures are refused and
// change nothing.
func TestRetireRefusals(t *testing.T) {
	e := mustEnv(t, envOpts{})
	out, err := e.svc.Capture(context.Background(), procedures.CaptureRequest{Code: readOnlyCode, SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	p := "/v1/procedures/" + out.Procedure.Name + "/retirement"
	cases := []struct {
		name, method, path string
		body               any
		status             int
	}{
		{"no body", "PUT", p, nil, 400},
		{"no reason", "PUT", p, map[string]any{}, 400},
		{"empty reason", "PUT", p, map[string]any{"reason": ""}, 400},
		{"blank reason", "PUT", p, map[string]any{"reason": "   "}, 400},
		{"reason too long", "PUT", p, map[string]any{"reason": strings.Repeat("x", 2049)}, 400},
		{"unknown field", "PUT", p, map[string]any{"reason": "r", "retired": true}, 400},
		{"unknown procedure", "PUT", "/v1/procedures/proc__nothing__here/retirement", map[string]any{"reason": "r"}, 404},
		{"unknown procedure, bring back", "DELETE", "/v1/procedures/proc__nothing__here/retirement", nil, 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body := e.do(t, http.DefaultClient, tc.method, tc.path, tc.body)
			if code != tc.status || !strings.Contains(string(body), `"error"`) {
				t.Fatalf("%s %s: %d %s, want %d", tc.method, tc.path, code, body, tc.status)
			}
		})
	}
	got, err := e.svc.Get(context.Background(), out.Procedure.Name)
	if err != nil || got.Retired != nil {
		t.Fatalf("after refusals: %+v, %v; want not retired", got.Retired, err)
	}
	ds, err := e.svc.Decisions(context.Background(), audit.DecisionFilter{Kind: audit.KindRetire})
	if err != nil || len(ds) != 0 {
		t.Fatalf("retire decisions %v, %v; want none", ds, err)
	}
}
