package main

import (
	"net/url"
	"strings"
	"testing"
)

// TestSearchOverHTTP: q on GET /v1/procedures and the planner view through a
// real server: matches only, most relevant first, each with a score; hostile
// q is a clear 400 or a safe match.
func TestSearchOverHTTP(t *testing.T) {
	t.Parallel()
	s := mustServe(t, serverOpts{Upstream: mustUpstream(t)})
	oom := s.mustCapture(t, map[string]any{"code": readOnlyCode, "session_id": "a",
		"cause":    map[string]any{"name": "memory exceeded", "description": "killed by the batch system"},
		"metadata": map[string]any{"trigger_signals": []any{"pilot OOM killer"}}}, nil)["procedure"].(map[string]any)["name"].(string)
	docs := s.mustCapture(t, map[string]any{"code": "a = tools.search_panda_docs(query=q)\nreturn [a, tools.get_retry_chain(task_id=1)]",
		"session_id": "b", "summary": "look up the documentation of a brokerage error"}, nil)["procedure"].(map[string]any)["name"].(string)
	find := func(q string) []map[string]any {
		t.Helper()
		out := mustStatus(t, s.send(t, req{Method: "GET", Path: "/v1/procedures?q=" + url.QueryEscape(q)}), 200)
		var ps []map[string]any
		for _, p := range out["procedures"].([]any) {
			ps = append(ps, p.(map[string]any))
		}
		if int(out["total"].(float64)) != len(ps) {
			t.Fatalf("total %v for %d", out["total"], len(ps))
		}
		return ps
	}
	if ps := find("OOM"); len(ps) != 1 || ps[0]["name"] != oom || ps[0]["score"].(float64) <= 0 {
		t.Fatalf("q=OOM: %v", ps)
	}
	if ps := find("brokerage documentation"); len(ps) != 1 || ps[0]["name"] != docs {
		t.Fatalf("q=brokerage: %v", ps)
	}
	if ps := find(`memory AND (killer OR "y") *:* title:[oom TO z] \`); len(ps) == 0 || ps[0]["name"] != oom {
		t.Fatalf("lucene syntax: %v", ps)
	}
	// Without q: no score.
	all := mustStatus(t, s.send(t, req{Method: "GET", Path: "/v1/procedures"}), 200)["procedures"].([]any)
	for _, p := range all {
		if _, has := p.(map[string]any)["score"]; has {
			t.Fatalf("a score without q: %v", p)
		}
	}
	tools := mustStatus(t, s.send(t, req{Method: "GET", Path: "/v1/procedures/tools?q=killed"}), 200)["tools"].([]any)
	if len(tools) != 1 || tools[0].(map[string]any)["name"] != oom || tools[0].(map[string]any)["score"] == nil {
		t.Fatalf("planner view q=killed: %v", tools)
	}
	for name, q := range map[string]string{
		"too long":    strings.Repeat("a", 513),
		"not utf-8":   "\xff\xfe",
		"no word":     "+-&&||!(){}[]^\"~*?:\\/",
		"empty words": "   ",
	} {
		t.Run(name, func(t *testing.T) {
			r := s.send(t, req{Method: "GET", Path: "/v1/procedures?q=" + url.QueryEscape(q)})
			mustError(t, r, 400, "invalid_request")
			if !strings.Contains(string(r.Body), `"field":"q"`) {
				t.Fatalf("the error does not name q: %s", r.Body)
			}
			mustError(t, s.send(t, req{Method: "GET", Path: "/v1/procedures/tools?q=" + url.QueryEscape(q)}), 400, "invalid_request")
		})
	}
}
