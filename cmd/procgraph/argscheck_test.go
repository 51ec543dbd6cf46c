package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/health"
)

// boundedCatalogue is examples/catalogue.json with a maximum of 10 on
// get_task_jobs_summary's task_id.
func boundedCatalogue(tb testing.TB) string {
	tb.Helper()
	b, err := os.ReadFile(catalogueFile(tb))
	if err != nil {
		tb.Fatal(err)
	}
	var cat struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(b, &cat); err != nil {
		tb.Fatal(err)
	}
	found := false
	for _, t := range cat.Tools {
		if t["name"] == "get_task_jobs_summary" {
			t["input_schema"].(map[string]any)["properties"].(map[string]any)["task_id"].(map[string]any)["maximum"] = 10
			found = true
		}
	}
	if !found {
		tb.Fatal("the examples' catalogue has no get_task_jobs_summary")
	}
	out, _ := json.Marshal(cat)
	p := filepath.Join(tb.TempDir(), "catalogue.json")
	if err := os.WriteFile(p, out, 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}

// TestToolArgumentsCheckedAtCallTimeEndToEnd: through the real server, a
// turn and an invoke whose literal (task_id=99999) breaks the tool's
// input_schema (maximum 10) never reach the upstream; each fails
// invalid_arguments, told without the value; the procedure's health is
// unchanged and it is not demoted however often; the audit log (API and
// CLI) says what happened to each allowed run.
func TestToolArgumentsCheckedAtCallTimeEndToEnd(t *testing.T) {
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up, NoCatalogue: true, Extra: []string{"--tools", boundedCatalogue(t)}})
	const code = "return tools.get_task_jobs_summary(task_id=99999)"

	failed := func(t *testing.T, out map[string]any) {
		t.Helper()
		e, _ := out["error"].(map[string]any)
		if out["status"] != "failed" || e == nil || e["code"] != "invalid_arguments" || e["tool"] != "get_task_jobs_summary" {
			t.Fatalf("answer %v, want failed invalid_arguments on get_task_jobs_summary", out)
		}
		if b, _ := json.Marshal(out); strings.Contains(string(b), "99999") {
			t.Fatalf("the answer quotes the value: %s", b)
		}
		if d := out["decision"].(map[string]any); d["outcome"] != "allowed" || d["result"] != "invalid_arguments" {
			t.Fatalf("decision %v, want allowed with result invalid_arguments", d)
		}
	}

	t.Run("a turn", func(t *testing.T) {
		out := mustStatus(t, s.post(t, "/v1/turns", map[string]any{"code": code, "session_id": "s1", "phase": "automatic"}), 200)
		failed(t, out)
		up.mustSeeNothing(t, "a turn over the schema's maximum")
	})

	name := mustCaptureName(t, s, code, "capture")
	t.Run("an invoke, again and again", func(t *testing.T) {
		for i := 0; i <= health.DefaultDemoteAfter; i++ {
			failed(t, mustStatus(t, s.invoke(t, name, map[string]any{"phase": "automatic"}), 200))
		}
		up.mustSeeNothing(t, "an invoke over the schema's maximum")
		p := mustStatus(t, s.get(t, "/v1/procedures/"+name), 200)
		h := p["health"].(map[string]any)
		if num(h["runs"]) != 0 || num(h["failed"]) != 0 || p["demoted"] == true {
			t.Fatalf("health %v, demoted %v: a refused call counts in no health", h, p["demoted"])
		}
		// Still exposed and invokable automatically: a call within the
		// schema reaches the upstream.
		ok := mustCaptureName(t, s, readOnlyCode, "capture")
		out := mustStatus(t, s.invoke(t, ok, map[string]any{"phase": "automatic", "arguments": map[string]any{"task_id": 7}}), 200)
		if out["status"] != "succeeded" || out["decision"].(map[string]any)["result"] != "succeeded" || len(up.tools()) == 0 {
			t.Fatalf("a call within the schema: %v", out)
		}
	})

	t.Run("the audit log says what happened", func(t *testing.T) {
		results := map[string]int{}
		for _, d := range s.decisions(t, "limit=1000") {
			if d["kind"] == "invoke" || d["kind"] == "turn" {
				r, _ := d["result"].(string)
				results[r]++
			}
		}
		if results["invalid_arguments"] != health.DefaultDemoteAfter+2 || results["succeeded"] != 1 || len(results) != 2 {
			t.Fatalf("results of the allowed runs %v", results)
		}
		code, out, errOut := runMainWith(t, map[string]string{"PROCGRAPH_URL": s.URL}, "decisions", "--procedure", name)
		if code != 0 || !strings.Contains(out, "RESULT") || !strings.Contains(out, "invalid_arguments") {
			t.Fatalf("procgraph decisions: exit %d\n%s%s", code, out, errOut)
		}
	})
}
