package mcpserve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/graph/embedded"
)

// connectModern connects a 2026-07-28 client (the SDK's default) to path
// as holder; with a list_changed handler it holds a subscriptions/listen
// open.
func (e *env) connectModern(path, holder string, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v1"}, opts)
	tr := &mcp.StreamableClientTransport{Endpoint: e.url + path, HTTPClient: &http.Client{Transport: bearer{"tok-" + holder}}}
	s, err := c.Connect(context.Background(), tr, nil)
	if err == nil {
		e.t.Cleanup(func() { _ = s.Close() })
	}
	return s, err
}

// sendModern posts body to /mcp as holder with the revision header (none
// for "", else with the revision's Mcp-Method too), and returns the answer; it fails if a session was opened.
func (e *env) sendModern(t *testing.T, holder, header, body string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", e.url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer tok-"+holder)
	if header != "" {
		var m struct{ Method string }
		_ = json.Unmarshal([]byte(body), &m)
		req.Header.Set("MCP-Protocol-Version", header)
		req.Header.Set("Mcp-Method", m.Method)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.Header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("a session was opened: %s", b)
	}
	return string(b)
}

// listenBody is a 2026-07-28 subscriptions/listen for list_changed.
const listenBody = `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"toolsListChanged":true}}}`

// mustRefuseListen checks that holder cannot open a listen: the JSON-RPC
// error busy, its data the API's error with reason mcp_sessions and limit.
func (e *env) mustRefuseListen(t *testing.T, holder, limit string) {
	t.Helper()
	got := e.sendModern(t, holder, ModernRevision, listenBody)
	if !strings.Contains(got, `"code":-32001`) || !strings.Contains(got, `"reason":"mcp_sessions"`) || !strings.Contains(got, `"limit":"`+limit+`"`) {
		t.Fatalf("%s listening past the %s cap: %s", holder, limit, got)
	}
}

// TestListensCountAsSessions: a stateless client holds a slot of the
// session caps while its subscriptions/listen is open, beside the stateful
// sessions; one past a cap is refused (busy, mcp_sessions), a closed one
// frees its slot, and stateless requests without a listen hold none.
func TestListensCountAsSessions(t *testing.T) {
	limits := NewSessionLimits(3, 2)
	e := newEnvWith(t, false, func(c *Config, _ *embedded.Store) { c.Sessions = limits })
	listening := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {}}
	if _, err := e.tryConnect("/mcp", "reader"); err != nil {
		t.Fatal(err)
	}
	l, err := e.connectModern("/mcp/interactive", "reader", listening)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.InitializeResult().ProtocolVersion; got != ModernRevision {
		t.Fatalf("negotiated %s, want %s", got, ModernRevision)
	}
	if st := limits.Stats(); st.Open != 2 {
		t.Fatalf("%d open, want the session and the listen", st.Open)
	}
	e.mustRefuseSession(t, "/mcp", "reader", "per_token")
	e.mustRefuseListen(t, "reader", "per_token")
	// Without a listen, a stateless client holds nothing.
	quiet, err := e.connectModern("/mcp", "reader", nil)
	if err != nil {
		t.Fatalf("a stateless client without a listen was refused: %v", err)
	}
	if _, err := quiet.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.connectModern("/mcp", "invoker", listening); err != nil {
		t.Fatalf("another holder within the total: %v", err)
	}
	waitFor(t, "the third listen", func() bool { return limits.Stats().Open == 3 })
	e.mustRefuseListen(t, "operator", "total")
	if refused := limits.Stats().Refused; refused[LimitPerToken] < 2 || refused[LimitTotal] < 1 {
		t.Fatalf("refusals counted %v", refused)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a slot after closing a listen", func() bool {
		_, err := e.tryConnect("/mcp", "reader")
		return err == nil
	})
}

// TestModernRevisionNeedsModernRequests: the revision header alone opens
// nothing. A 2026-07-28 header on a request without the revision's _meta
// is refused by the stateless handler (the SDK sees an uninitialised
// call); the revision's _meta without the header reaches the stateful
// handler, which refuses it; neither lists a tool.
func TestModernRevisionNeedsModernRequests(t *testing.T) {
	e := newEnv(t, false)
	send := func(header, body string) string { return e.sendModern(t, "reader", header, body) }
	bare := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	if got := e.sendModern(t, "reader", ModernRevision, bare); strings.Contains(got, `"tools"`) || !strings.Contains(got, `"error"`) {
		t.Fatalf("a 2026-07-28 header without _meta: %s", got)
	}
	if got := send(ModernRevision, bare); strings.Contains(got, `"tools"`) || !strings.Contains(got, `"error"`) {
		t.Fatalf("a 2026-07-28 header without _meta: %s", got)
	}
	withMeta := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	if got := send("", withMeta); strings.Contains(got, `"tools"`) || !strings.Contains(got, "is not supported") {
		t.Fatalf("2026-07-28 _meta without the header: %s", got)
	}
	if got := send(ModernRevision, withMeta); !strings.Contains(got, `"find_all_procedures"`) {
		t.Fatalf("a 2026-07-28 request: %s", got)
	}
}

// TestStatelessUsageKeyIsTheHolder: a stateless proc__ call's usage key is
// "mcp:" and the token holder's name, one key per holder: two calls by one
// holder add one to the procedure's frequency, a call by another holder one
// more, and a stateful session's call one more again.
func TestStatelessUsageKeyIsTheHolder(t *testing.T) {
	e := newEnv(t, false)
	ro := e.capture(readOnlyCode)
	frequency := func() int64 {
		t.Helper()
		p, err := e.svc.Get(context.Background(), ro.Name)
		if err != nil {
			t.Fatal(err)
		}
		return p.Frequency
	}
	before := frequency()
	invoke := func(s *mcp.ClientSession) {
		t.Helper()
		if res := call(t, s, ro.Name, map[string]any{"task_id": 42}); res.IsError {
			t.Fatalf("the call failed: %s", text(res))
		}
	}
	steps := []struct {
		name string
		open func() *mcp.ClientSession
		want int64
	}{
		{"a stateless holder's first call", func() *mcp.ClientSession { return e.mustConnectModern(t, "invoker") }, before + 1},
		{"the same holder again, on a new connection", func() *mcp.ClientSession { return e.mustConnectModern(t, "invoker") }, before + 1},
		{"another stateless holder", func() *mcp.ClientSession { return e.mustConnectModern(t, "operator") }, before + 2},
		{"a stateful session of the first holder", func() *mcp.ClientSession {
			s, err := e.tryConnect("/mcp", "invoker")
			if err != nil {
				t.Fatal(err)
			}
			return s
		}, before + 3},
	}
	for _, st := range steps {
		invoke(st.open())
		if got := frequency(); got != st.want {
			t.Fatalf("%s: frequency %d, want %d", st.name, got, st.want)
		}
	}
}

// mustConnectModern is connectModern to /mcp, failing the test on an error.
func (e *env) mustConnectModern(t *testing.T, holder string) *mcp.ClientSession {
	t.Helper()
	s, err := e.connectModern("/mcp", holder, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.InitializeResult().ProtocolVersion; got != ModernRevision {
		t.Fatalf("negotiated %s, want %s", got, ModernRevision)
	}
	return s
}

// TestModernAnswersAreJSONBodies: at ModernRevision a request's answer is
// one application/json body (the client accepts it, and nothing is sent
// to it mid-request), which a client reads without parsing an event
// stream; a stateful session's answers stay an event stream (a review
// there is an elicitation sent in the middle of the call).
func TestModernAnswersAreJSONBodies(t *testing.T) {
	e := newEnv(t, false)
	post := func(header, body string) (string, string) {
		req, _ := http.NewRequest("POST", e.url+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer tok-reader")
		if header != "" {
			var m struct{ Method string }
			_ = json.Unmarshal([]byte(body), &m)
			req.Header.Set("MCP-Protocol-Version", header)
			req.Header.Set("Mcp-Method", m.Method)
			if m.Method == "tools/call" {
				req.Header.Set("Mcp-Name", "find_all_procedures")
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.Header.Get("Content-Type"), string(b)
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, tc := range []struct{ name, body string }{
		{"tools/list", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}`},
		{"tools/call", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"find_all_procedures","arguments":{},` + meta + `}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ct, body := post(ModernRevision, tc.body)
			var msg struct {
				ID     int             `json:"id"`
				Result json.RawMessage `json:"result"`
			}
			if !strings.HasPrefix(ct, "application/json") || json.Unmarshal([]byte(body), &msg) != nil || msg.Result == nil {
				t.Fatalf("Content-Type %q, body %q: want one JSON-RPC result as application/json", ct, body)
			}
		})
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	if ct, body := post("", init); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("a stateful session's initialize: Content-Type %q (%q), want an event stream", ct, body)
	}
}
