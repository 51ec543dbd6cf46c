package mcpserve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/procedures"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// post sends one JSON-RPC message to path with token ("" for none) and
// session id ("" for none).
func (e *env) post(t *testing.T, path, token, session, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// TestAuth: no or a wrong token is 401 with the API's error body, a token
// without read is 403, a reader lists but cannot call, and a session stays
// bound to the holder that opened it.
func TestAuth(t *testing.T) {
	e := newEnv(t, false)
	ro := e.capture(readOnlyCode)
	for _, tc := range []struct {
		token  string
		status int
		code   string
	}{{"", 401, "unauthorized"}, {"tok-nobody", 401, "unauthorized"}, {"tok-capturer", 403, "forbidden"}} {
		resp := e.post(t, "/mcp", tc.token, "", initializeBody)
		var body struct {
			Error struct{ Code string } `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		if resp.StatusCode != tc.status || body.Error.Code != tc.code {
			t.Fatalf("token %q: %d %s, want %d %s", tc.token, resp.StatusCode, body.Error.Code, tc.status, tc.code)
		}
		if tc.status == 401 && resp.Header.Get("WWW-Authenticate") == "" {
			t.Fatal("401 without WWW-Authenticate")
		}
	}

	s := e.connect("/mcp", "reader", nil)
	if got := toolNames(t, s); !slices.Equal(got, []string{FindToolName}) {
		t.Fatalf("reader lists %v, want only what it may call", got)
	}
	for name, args := range map[string]map[string]any{ro.Name: {"task_id": 1}, AutoRunToolName: {"name": ro.Name, "enabled": true}} {
		res := call(t, s, name, args)
		if !res.IsError || !strings.HasPrefix(text(res), "forbidden") {
			t.Fatalf("reader calls %s: %s", name, text(res))
		}
	}
	if res := call(t, s, FindToolName, nil); res.IsError {
		t.Fatalf("reader finds: %s", text(res))
	}
	if len(e.up.seen()) != 0 {
		t.Fatalf("the upstream saw %v", e.up.seen())
	}
	ds, _ := e.svc.Decisions(context.Background(), audit.DecisionFilter{Procedure: ro.Name})
	if len(ds) != 0 {
		t.Fatalf("a forbidden call was decided: %+v", ds)
	}

	resp := e.post(t, "/mcp", "tok-reader", "", initializeBody)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
	}
	hijack := e.post(t, "/mcp", "tok-invoker", sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	b, _ := io.ReadAll(hijack.Body)
	if hijack.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "mismatch") {
		t.Fatalf("another holder on the reader's session: %d %s", hijack.StatusCode, b)
	}
	_ = e.post(t, "/mcp", "tok-reader", sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if own := e.post(t, "/mcp", "tok-reader", sid, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`); own.StatusCode != http.StatusOK {
		t.Fatalf("the holder on its own session: %d", own.StatusCode)
	}
}

// TestNoAuth: without tokens every caller is anonymous with every scope.
func TestNoAuth(t *testing.T) {
	e := newEnv(t, false)
	ro := e.capture(readOnlyCode)
	h, err := New(Config{Service: e.svc, Replayer: e.rp, Phase: audit.PhaseAutomatic})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "anon", Version: "v1"}, nil)
	ts := newTestServer(t, h)
	s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if res := call(t, s, ro.Name, map[string]any{"task_id": 1}); res.IsError {
		t.Fatalf("anonymous call: %s", text(res))
	}
	ds, _ := e.svc.Decisions(context.Background(), audit.DecisionFilter{Procedure: ro.Name})
	if len(ds) != 1 || ds[0].Actor != "anonymous" {
		t.Fatalf("audit %+v", ds)
	}
	if _, err := New(Config{Service: e.svc, Replayer: e.rp, Phase: "later"}); err == nil {
		t.Fatal("New accepted an unknown phase")
	}
}

// TestNoAuthOffersNoGrant: without tokens an MCP client holds every scope
// but grant (docs/design.md "Secure by default"): neither endpoint lists
// set_procedure_auto_run and a call to it by name grants nothing, and on
// /mcp/interactive a state-changing proc__ call is not its own reviewer.
func TestNoAuthOffersNoGrant(t *testing.T) {
	e := newEnv(t, true)
	sc := e.capture(stateChangingCode)
	for _, phase := range []audit.Phase{audit.PhaseAutomatic, audit.PhaseInteractive} {
		h, err := New(Config{Service: e.svc, Replayer: e.rp, Phase: phase})
		if err != nil {
			t.Fatal(err)
		}
		c := mcp.NewClient(&mcp.Implementation{Name: "anon", Version: "v1"}, nil)
		s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: newTestServer(t, h)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for tool, err := range s.Tools(context.Background(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			if tool.Name == AutoRunToolName {
				t.Fatalf("%s lists %s without auth", phase, AutoRunToolName)
			}
		}
		if res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: AutoRunToolName,
			Arguments: map[string]any{"name": sc.Name, "enabled": true, "reason": "me"}}); err == nil && !res.IsError {
			t.Fatalf("%s: %s called without auth: %s", phase, AutoRunToolName, text(res))
		}
		if phase == audit.PhaseInteractive {
			if res := call(t, s, sc.Name, map[string]any{"task_id": 1}); !res.IsError || !strings.Contains(text(res), "review_required") {
				t.Fatalf("an anonymous proc__ call reviewed itself: %s", text(res))
			}
		}
	}
	if p, _ := e.svc.Get(context.Background(), sc.Name); p.AutoRun.Enabled {
		t.Fatalf("granted without auth: %+v", p.AutoRun)
	}
	if slices.Contains(e.up.seen(), "kill_job") {
		t.Fatalf("the upstream saw kill_job: %v", e.up.seen())
	}
}

// newTestServer serves h and returns its URL.
func newTestServer(t *testing.T, h http.Handler) string {
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestListChanged: a capture followed by Refresh notifies connected
// clients; a Refresh with nothing changed is a no-op; Run refreshes on the
// service's change feed.
func TestListChanged(t *testing.T) {
	e := newEnv(t, true)
	e.capture(readOnlyCode)
	changed := make(chan struct{}, 8)
	s := e.connect("/mcp", "operator", &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	if n := len(toolNames(t, s)); n != 3 {
		t.Fatalf("%d tools", n)
	}
	if ch, err := e.auto.Refresh(context.Background()); err != nil || ch {
		t.Fatalf("refresh with nothing new: %v, %v", ch, err)
	}
	select {
	case <-changed:
		t.Fatal("notified without a change")
	case <-time.After(150 * time.Millisecond):
	}
	sc := e.capture(stateChangingCode)
	if ch, err := e.auto.Refresh(context.Background()); err != nil || !ch {
		t.Fatalf("refresh after a capture: %v, %v", ch, err)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/tools/list_changed")
	}
	if !strings.Contains(strings.Join(toolNames(t, s), " "), sc.Name) {
		t.Fatalf("%s not listed after the change", sc.Name)
	}
	// Run follows the service's change feed: a catalogue put notifies
	// without anyone calling Refresh, and Run ends with its context.
	ctx, cancel := context.WithCancel(context.Background())
	subscribed := e.svc.Changes().Subscribers()
	ran := make(chan struct{})
	go func() { e.auto.Run(ctx); close(ran) }()
	time.Sleep(100 * time.Millisecond) // Run's first refresh: nothing new
	if _, err := e.svc.PutCatalogue(context.Background(), []procedures.Tool{{Name: "get_jobs", ReadOnly: true}}, "tester"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no notification after a catalogue change")
	}
	cancel()
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not end with its context")
	}
	if n := e.svc.Changes().Subscribers(); n != subscribed-1 {
		t.Fatalf("%d subscriptions after Run ended, want %d: Run leaves the feed", n, subscribed-1)
	}
}

// TestToolsFollowCommittedWrites: a write the service answered is in the
// very next MCP request's tool list, with no Run and no Refresh: the
// service publishes before it answers, and a request finding changes
// waiting refreshes first.
func TestToolsFollowCommittedWrites(t *testing.T) {
	e := newEnv(t, true)
	e.capture(readOnlyCode)
	s := e.connect("/mcp/interactive", "operator", nil)
	before := len(toolNames(t, s))
	sc := e.capture(stateChangingCode)
	names := toolNames(t, s)
	if len(names) != before+1 || !strings.Contains(strings.Join(names, " "), sc.Name) {
		t.Fatalf("after a capture: %v (before: %d tools)", names, before)
	}
	if _, _, err := e.svc.SetRetired(context.Background(), procedures.RetireRequest{Name: sc.Name, Retired: true, Reason: "gone", Actor: "t"}); err != nil {
		t.Fatal(err)
	}
	if names := toolNames(t, s); strings.Contains(strings.Join(names, " "), sc.Name) {
		t.Fatalf("after a retirement: %v", names)
	}
}
