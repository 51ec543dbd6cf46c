package main

import (
	"context"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mustMCPClientAs connects the SDK's client to path on s as the holder of
// token.
func mustMCPClientAs(t *testing.T, s *server, path, token string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "v1"}, nil)
	sess, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: s.URL + path,
		HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", path, err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

// TestTurnCaptureNeedsCaptureScope: a turn's capture creates a procedure
// (exposed, with planner-visible text), so it needs the capture scope as
// POST /v1/procedures does. An invoke-only token asking for one is refused
// with 403 forbidden naming the scope before anything is decided, recorded
// or run — in either phase — and the same block without capture runs; a
// token with capture captures. Over MCP, run_code takes no capture at all.
func TestTurnCaptureNeedsCaptureScope(t *testing.T) {
	up := mustUpstream(t)
	a := mustTurnServer(t, up)
	const code = "a = tools.get_task_jobs_summary(task_id=task_id)\nb = tools.get_retry_chain(task_id=task_id)\nreturn [a, b]"
	body := func(phase string, capture bool) map[string]any {
		b := map[string]any{"code": code, "session_id": "scope", "phase": phase, "arguments": map[string]any{"task_id": 1}}
		if capture {
			b["capture"] = map[string]any{"cause": map[string]any{"name": "planted cause"}, "summary": "planted summary"}
		}
		return b
	}
	before := len(a.decisions(t, "limit=1000"))
	for _, phase := range []string{"automatic", "interactive"} {
		d := mustError(t, a.as(t, a.agent2, "POST", "/v1/turns", body(phase, true)), 403, "forbidden")
		if d["scope"] != "capture" {
			t.Fatalf("%s: details %v, want scope capture", phase, d)
		}
	}
	up.mustSeeNothing(t, "a turn refused for its capture")
	if got := len(a.decisions(t, "limit=1000")); got != before {
		t.Fatalf("a refused turn was recorded: %d decisions, had %d", got, before)
	}
	pending := mustStatus(t, a.as(t, a.viewer, "GET", "/v1/approvals?status=pending", nil), 200)["approvals"].([]any)
	if len(pending) != 0 {
		t.Fatalf("a refused turn is pending: %v", pending)
	}
	list := mustStatus(t, a.as(t, a.viewer, "GET", "/v1/procedures?tool=get_retry_chain", nil), 200)
	if list["total"] != float64(0) {
		t.Fatalf("a refused turn was captured: %v", list)
	}

	// Without capture, the invoke-only token's turn runs; with the scope,
	// the turn captures.
	out := mustStatus(t, a.as(t, a.agent2, "POST", "/v1/turns", body("automatic", false)), 200)
	if out["procedure"] != nil {
		t.Fatalf("a turn without capture captured %v", out["procedure"])
	}
	out = mustStatus(t, a.submit(t, body("automatic", true)), 200)
	if p, _ := out["procedure"].(map[string]any); p == nil {
		t.Fatalf("the capture-scoped turn captured nothing: %v", out)
	}

	// MCP's run_code has no capture argument: asked for one, it refuses
	// the call, on both endpoints, and nothing runs.
	up.reset()
	for _, path := range []string{"/mcp", "/mcp/interactive"} {
		sess := mustMCPClientAs(t, a.server, path, a.agent2)
		res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{
			"code": code, "arguments": map[string]any{"task_id": 2}, "capture": map[string]any{"summary": "planted"}}})
		if err == nil && !res.IsError {
			t.Fatalf("%s: run_code with capture ran: %s", path, mcpText(res))
		}
	}
	up.mustSeeNothing(t, "run_code asked to capture")
}
