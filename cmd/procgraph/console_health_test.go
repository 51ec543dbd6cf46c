package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestConsoleHealth: in a real headless Chromium, a procedure's runs show
// on the procedures table (its success rate over its runs) and on its page
// (the rate, the failing streak, the failures by class and the durations,
// and each version's record), and a demoted procedure is badged on both.
func TestConsoleHealth(t *testing.T) {
	t.Parallel()
	tab := mustBrowser(t)
	up := mustUpstream(t)
	tokens := filepath.Join(t.TempDir(), "tokens.json")
	agentA, agentB := mustCreateToken(t, tokens, "agent-a", "read,invoke"), mustCreateToken(t, tokens, "agent-b", "read,invoke")
	ops := mustCreateToken(t, tokens, "ops", "read,capture")
	s := mustServe(t, serverOpts{Upstream: up, TokensFile: tokens})
	s.token = ops
	s.mustCapture(t, map[string]any{"code": readOnlyCode, "session_id": "h"}, nil)
	invoke := func(token string) {
		mustStatus(t, s.send(t, req{Method: "POST", Path: "/v1/procedures/" + readOnlyName + "/invoke", Token: &token,
			Body: map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "automatic"}}), 200)
	}
	invoke(agentA)
	up.mu.Lock()
	up.fail["get_retry_chain"] = "down"
	up.mu.Unlock()
	invoke(agentA)

	var ignored any
	tab.open(t, s.URL, "#/causes")
	tab.eval(t, `sessionStorage.setItem('procgraph.token', `+jsString(s.token)+`)`, &ignored)
	tab.open(t, s.URL, "#/procedures")
	if got := tab.text(t, "#procedures"); !strings.Contains(got, "50% of 2 runs") {
		t.Fatalf("the procedures table shows no record:\n%s", got)
	}
	tab.open(t, s.URL, "#/procedure/"+readOnlyName)
	got := tab.text(t, "#health")
	for _, want := range []string{"50% of 2 runs", "last 1 failed", "tool_error ×1", "p50 ≤"} {
		if !strings.Contains(got, want) {
			t.Fatalf("the procedure's health %q lacks %q", got, want)
		}
	}
	if v := tab.text(t, "#versions"); !strings.Contains(v, "50% of 2 runs") {
		t.Fatalf("the versions table shows no record:\n%s", v)
	}
	tab.mustClean(t, "health")
	tab.screenshot(t, "health-procedure")

	// Two more failures, another agent's, make three in a row of two
	// callers: the procedure is demoted (--demote-after's default), and
	// both pages say so.
	invoke(agentB)
	invoke(agentB)
	tab.open(t, s.URL, "#/procedures")
	if got := tab.text(t, "#procedures"); !strings.Contains(got, "25% of 4 runs") || !strings.Contains(got, "demoted") {
		t.Fatalf("the procedures table does not show the demotion:\n%s", got)
	}
	tab.open(t, s.URL, "#/procedure/"+readOnlyName)
	if got := tab.text(t, "#health"); !strings.Contains(got, "demoted") || !strings.Contains(got, "last 3 failed") ||
		!strings.Contains(got, "demotion streak 3, several callers") {
		t.Fatalf("the procedure's health %q does not show the demotion", got)
	}
	tab.mustClean(t, "demoted")
}
