package mcpserve

import (
	"io"
	"strings"
	"testing"
)

// TestRequestBodyBounded: an MCP request body over MaxBody (default 1 MiB)
// is refused before it is decoded, and the endpoint keeps serving (issue 8
// item 1: MCP bodies are bounded per call).
func TestRequestBodyBounded(t *testing.T) {
	e := newEnv(t, false)
	big := strings.Replace(initializeBody, `"name":"raw"`, `"name":"`+strings.Repeat("x", DefaultMaxBody)+`"`, 1)
	resp := e.post(t, "/mcp", "tok-reader", "", big)
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode < 400 || resp.StatusCode >= 500 {
		t.Fatalf("a %d-byte body: %d %s, want a 4xx refusal", len(big), resp.StatusCode, raw)
	}
	if strings.Contains(string(raw), "xxxxxxxx") {
		t.Fatalf("the refusal echoes the body: %.200s", raw)
	}
	if resp := e.post(t, "/mcp", "tok-reader", "", initializeBody); resp.StatusCode != 200 {
		t.Fatalf("initialize after the refusal: %d", resp.StatusCode)
	}
}
