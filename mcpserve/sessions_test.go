package mcpserve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/procgraph/procgraph/graph/embedded"
)

// tryConnect opens an MCP session to path as holder, or returns the error:
// at 2025-11-25, the last revision with sessions.
func (e *env) tryConnect(path, holder string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: e.url + path, HTTPClient: &http.Client{Transport: bearer{"tok-" + holder}}}
	s, err := c.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: legacyRevision})
	if err == nil {
		e.t.Cleanup(func() { _ = s.Close() })
	}
	return s, err
}

// mustRefuseSession checks that holder cannot open a session on path: 429
// busy, reason mcp_sessions, the limit named, Retry-After set.
func (e *env) mustRefuseSession(t *testing.T, path, holder, limit string) {
	t.Helper()
	resp := e.post(t, path, "tok-"+holder, "", initializeBody)
	body, _ := io.ReadAll(resp.Body)
	var got struct {
		Error struct {
			Code    string         `json:"code"`
			Message string         `json:"message"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &got)
	if resp.StatusCode != http.StatusTooManyRequests || got.Error.Code != "busy" || got.Error.Details["reason"] != ReasonMCPSessions ||
		got.Error.Details["limit"] != limit || resp.Header.Get("Retry-After") == "" || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("%s opening a session on %s: %d %v %s; want 429 busy mcp_sessions (%s) with Retry-After", holder, path, resp.StatusCode, resp.Header, body, limit)
	}
	if !strings.Contains(got.Error.Message, "MCP sessions") {
		t.Fatalf("the refusal does not say why: %q", got.Error.Message)
	}
	if _, err := e.tryConnect(path, holder); err == nil {
		t.Fatalf("the SDK client opened a session past the %s cap", limit)
	}
}

// TestSessionCaps: sessions are capped per token holder and in total,
// across /mcp and /mcp/interactive; a new session past a cap is refused and
// the open ones keep working; a closed session frees its slot.
func TestSessionCaps(t *testing.T) {
	limits := NewSessionLimits(3, 2)
	e := newEnvWith(t, false, func(c *Config, _ *embedded.Store) { c.Sessions = limits })
	s1, err := e.tryConnect("/mcp", "reader")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.tryConnect("/mcp/interactive", "reader"); err != nil {
		t.Fatal(err)
	}
	e.mustRefuseSession(t, "/mcp", "reader", "per_token")
	e.mustRefuseSession(t, "/mcp/interactive", "reader", "per_token")
	if _, err := e.tryConnect("/mcp", "invoker"); err != nil {
		t.Fatalf("another holder within the total: %v", err)
	}
	e.mustRefuseSession(t, "/mcp", "operator", "total")

	// The open sessions are untouched by the refusals.
	if _, err := s1.ListTools(context.Background(), nil); err != nil {
		t.Fatalf("an open session stopped working: %v", err)
	}
	// Closing one (the client's DELETE) frees its slot.
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a slot after closing a session", func() bool {
		_, err := e.tryConnect("/mcp", "reader")
		return err == nil
	})
	e.mustRefuseSession(t, "/mcp", "reader", "per_token")
}

// TestSessionCapsFreeIdleSessions: a session idle for the session timeout
// expires and frees its slot.
func TestSessionCapsFreeIdleSessions(t *testing.T) {
	e := newEnvWith(t, false, func(c *Config, _ *embedded.Store) {
		c.Sessions = NewSessionLimits(1, 1)
		c.SessionTimeout = 200 * time.Millisecond
	})
	if _, err := e.tryConnect("/mcp", "reader"); err != nil {
		t.Fatal(err)
	}
	e.mustRefuseSession(t, "/mcp", "invoker", "total")
	waitFor(t, "the idle session to expire", func() bool {
		_, err := e.tryConnect("/mcp", "invoker")
		return err == nil
	})
}

// waitFor polls ok until it holds, failing after a generous deadline.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSessionLimitsWithoutTokens: without tokens (holder "") only the
// total cap applies; a reservation that opened nothing frees its slot.
func TestSessionLimitsWithoutTokens(t *testing.T) {
	l := NewSessionLimits(3, 1)
	for i := range 3 {
		if err := l.reserve(""); err != nil {
			t.Fatalf("reservation %d: %v", i, err)
		}
	}
	if err := l.reserve(""); err == nil {
		t.Fatal("a fourth reservation past the total")
	}
	l.settle("", "")
	if err := l.reserve(""); err != nil {
		t.Fatalf("a settled reservation that opened nothing still holds its slot: %v", err)
	}
	if err := l.reserve("alice"); err == nil {
		t.Fatal("the total cap does not hold for a token holder")
	}
}

// legacyRevision is the last MCP revision with sessions.
const legacyRevision = "2025-11-25"
