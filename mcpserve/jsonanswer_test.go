package mcpserve

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestSessionPingIsAJSONBody: on a stateful session (2025-11-25) a
// ping's answer, which nothing precedes, is one application/json body;
// the session's other answers stay event streams (a tools/call there may
// send an elicitation before its answer), and a ping of another session
// is refused as before.
func TestSessionPingIsAJSONBody(t *testing.T) {
	e := newEnv(t, false)
	post := func(session, body string) (int, string, string) {
		req, _ := http.NewRequest(http.MethodPost, e.url+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer tok-reader")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if session == "" {
			session = resp.Header.Get("Mcp-Session-Id")
		}
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b) + "\x00" + session
	}
	_, ct, out := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	body, sid, _ := strings.Cut(out, "\x00")
	if sid == "" || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("initialize: %q %q, session %q", ct, body, sid)
	}
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	st, ct, out := post(sid, `{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	body, _, _ = strings.Cut(out, "\x00")
	if st != 200 || !strings.HasPrefix(ct, "application/json") || strings.TrimSpace(body) != `{"jsonrpc":"2.0","id":7,"result":{}}` {
		t.Fatalf("ping: %d %q %q, want its answer as one JSON body", st, ct, body)
	}
	st, ct, out = post(sid, `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`)
	body, _, _ = strings.Cut(out, "\x00")
	if st != 200 || !strings.HasPrefix(ct, "text/event-stream") || !strings.Contains(body, `"id":8`) {
		t.Fatalf("tools/list: %d %q %q, want an event stream", st, ct, body)
	}
	if st, _, out := post("no-such-session", `{"jsonrpc":"2.0","id":9,"method":"ping"}`); st != http.StatusNotFound {
		t.Fatalf("a ping of an unknown session: %d %q", st, out)
	}
}
