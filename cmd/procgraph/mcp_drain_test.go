package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPSessionsEndAtTheDrain: neither an MCP session's notification
// stream (the GET the SDK's client holds open on a 2025-11-25 session) nor
// a 2026-07-28 client's subscriptions/listen holds the drain for its
// grace. Close answers the proc__ call in flight and the listen, then
// closes the sessions, and the drain completes: the log never says "drain
// incomplete" (before, each held it for the whole grace).
func TestMCPSessionsEndAtTheDrain(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a drain of a second")
	}
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up})
	name := mustCaptureName(t, s, readOnlyCode, "setup")
	sess := mustMCPAt(t, s, "/mcp", s.token, &mcp.ClientOptions{}, legacyMCP)
	// A 2026-07-28 client following list_changed holds a
	// subscriptions/listen open.
	listens := mustMCPAt(t, s, "/mcp/interactive", s.token, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {}}, modernMCP)
	for _, c := range []*mcp.ClientSession{sess, listens} { // both in use
		if _, err := c.ListTools(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	up.setDelay("get_retry_chain", time.Second)
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	called := make(chan result, 1)
	go func() {
		res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"task_id": 1}})
		called <- result{res, err}
	}()
	up.mustReach(t, "get_retry_chain")
	closed := make(chan error, 1)
	go func() { closed <- s.Main.Close() }()
	got := <-called
	if got.err != nil || got.res.IsError {
		t.Fatalf("the call in flight at the drain: %v %+v", got.err, got.res)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if logs := s.logs.String(); strings.Contains(logs, "drain incomplete") {
		t.Fatalf("an MCP session held the drain:\n%s", logs)
	}
}
