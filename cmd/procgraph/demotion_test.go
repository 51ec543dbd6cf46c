package main

import (
	"testing"
)

// TestDemotionHidesAndDenies: with --demote-after 2, two failed runs of a
// procedure's current version demote it: it leaves the planner view and
// MCP's tools, an automatic invoke is denied (reason demoted) and reaches
// no tool, an interactive one still runs, and its success lifts the
// demotion; both changes are health decisions by procgraph.
func TestDemotionHidesAndDenies(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up, Extra: []string{"--demote-after", "2"}})
	name := mustCaptureName(t, s, readOnlyCode, "d1")
	sess := mustMCPClient(t, s, "/mcp", nil)
	plannerTools := func() int {
		var view struct{ Tools []map[string]any }
		r := s.get(t, "/v1/procedures/tools")
		mustStatus(t, r, 200)
		r.Into(t, &view)
		return len(view.Tools)
	}
	if plannerTools() != 1 || mcpToolNames(t, sess)[name] == nil {
		t.Fatal("the procedure is not offered before it failed")
	}
	automatic := map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "automatic"}
	up.mu.Lock()
	up.fail["get_retry_chain"] = "down"
	up.mu.Unlock()
	for range 2 {
		if ans := mustStatus(t, s.invoke(t, name, automatic), 200); ans["status"] != "failed" {
			t.Fatalf("an invoke with a failing tool answered %v", ans)
		}
	}
	p := mustStatus(t, s.get(t, "/v1/procedures/"+name), 200)
	if p["demoted"] != true || p["exposed"] != false {
		t.Fatalf("after two failures: demoted %v, exposed %v; want demoted, hidden", p["demoted"], p["exposed"])
	}
	if n := plannerTools(); n != 0 {
		t.Errorf("the planner view lists %d tools, want the demoted procedure gone", n)
	}
	if mcpToolNames(t, sess)[name] != nil {
		t.Errorf("/mcp still lists the demoted %s", name)
	}
	up.reset()
	var denied struct {
		Error struct {
			Code    string
			Details struct{ Decision map[string]any }
		}
	}
	r := s.invoke(t, name, automatic)
	mustStatus(t, r, 403)
	r.Into(t, &denied)
	if denied.Error.Code != "denied" || denied.Error.Details.Decision["reason"] != "demoted" {
		t.Fatalf("an automatic invoke of a demoted procedure answered %+v", denied)
	}
	up.mustSeeNothing(t, "an automatic invoke of a demoted procedure")

	up.mu.Lock()
	delete(up.fail, "get_retry_chain")
	up.mu.Unlock()
	interactive := map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "interactive"}
	if ans := mustStatus(t, s.invoke(t, name, interactive), 200); ans["status"] != "succeeded" {
		t.Fatalf("an interactive invoke of a demoted read-only procedure answered %v", ans)
	}
	if p := mustStatus(t, s.get(t, "/v1/procedures/"+name), 200); p["demoted"] != false || p["exposed"] != true {
		t.Fatalf("after a success: demoted %v, exposed %v; want it back", p["demoted"], p["exposed"])
	}
	if plannerTools() != 1 {
		t.Error("the planner view does not list the procedure again")
	}
	var ds struct{ Decisions []map[string]any }
	r = s.get(t, "/v1/decisions?kind=health")
	mustStatus(t, r, 200)
	r.Into(t, &ds)
	if len(ds.Decisions) != 2 || ds.Decisions[0]["reason"] != "health_restored" || ds.Decisions[1]["reason"] != "demoted" ||
		ds.Decisions[1]["actor"] != "procgraph" {
		t.Fatalf("health decisions = %v; want demoted, then health_restored, by procgraph", ds.Decisions)
	}
}
