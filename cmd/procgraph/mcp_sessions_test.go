package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPSessionCapsThroughMain: --mcp-max-sessions-per-token and
// --mcp-max-sessions (and their environment twins) cap the sessions of
// the real server across /mcp and /mcp/interactive; a session past a cap
// is refused with 429 busy and the open ones keep working.
func TestMCPSessionCapsThroughMain(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens.json")
	alice := mustCreateToken(t, file, "alice", "read")
	bob := mustCreateToken(t, file, "bob", "read")
	for _, tc := range []struct {
		name  string
		extra []string
		env   map[string]string
		next  string // the holder refused next
		limit string
	}{
		{"per token (flag)", []string{"--mcp-max-sessions-per-token", "2"}, nil, alice, "per_token"},
		{"per token (env)", nil, map[string]string{"PROCGRAPH_MCP_MAX_SESSIONS_PER_TOKEN": "2"}, alice, "per_token"},
		{"total (env)", nil, map[string]string{"PROCGRAPH_MCP_MAX_SESSIONS": "2"}, bob, "total"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			s := mustServe(t, serverOpts{TokensFile: file, Extra: tc.extra})
			connect := func(path, token string) (*mcp.ClientSession, error) {
				c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "v1"}, nil)
				sess, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: s.URL + path,
					HTTPClient: &http.Client{Transport: bearer{token}}}, &mcp.ClientSessionOptions{ProtocolVersion: legacyMCP})
				if err == nil {
					t.Cleanup(func() { _ = sess.Close() })
				}
				return sess, err
			}
			first, err := connect("/mcp", alice)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := connect("/mcp/interactive", alice); err != nil {
				t.Fatal(err)
			}
			if _, err := connect("/mcp", tc.next); err == nil {
				t.Fatal("a session opened past the cap")
			}
			hreq, _ := http.NewRequest("POST", s.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
			hreq.Header.Set("Content-Type", "application/json")
			hreq.Header.Set("Accept", "application/json, text/event-stream")
			hreq.Header.Set("Authorization", "Bearer "+tc.next)
			resp, err := http.DefaultClient.Do(hreq)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), `"reason":"mcp_sessions"`) ||
				!strings.Contains(string(body), `"limit":"`+tc.limit+`"`) {
				t.Fatalf("a session past the cap: %d %v %s", resp.StatusCode, resp.Header, body)
			}
			if _, err := first.ListTools(context.Background(), nil); err != nil {
				t.Fatalf("an open session stopped working: %v", err)
			}
			// /metrics: the sessions open, and the refusals by cap (the
			// SDK client's attempt above, and the raw one).
			metrics := string(s.send(t, req{Method: "GET", Path: "/metrics"}).Body)
			if !strings.Contains(metrics, "\nprocgraph_mcp_sessions 2\n") {
				t.Errorf("/metrics does not count 2 open sessions")
			}
			refused := 0
			if m := regexp.MustCompile(`procgraph_mcp_sessions_refused_total\{limit="` + tc.limit + `"\} (\d+)`).FindStringSubmatch(metrics); m != nil {
				refused, _ = strconv.Atoi(m[1])
			}
			if refused < 2 {
				t.Errorf("/metrics counts %d refusals at %s, want 2 or more", refused, tc.limit)
			}
			if tc.limit == "per_token" {
				if _, err := connect("/mcp", bob); err != nil {
					t.Fatalf("another holder is refused by alice's cap: %v", err)
				}
			}
		})
	}
}
