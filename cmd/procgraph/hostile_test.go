package main

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestHostileBodies sends malformed, oversized and hostile requests: each
// is answered with a 4xx in the contract's error shape and the server stays
// up.
func TestHostileBodies(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up})
	mustCaptureName(t, s, readOnlyCode, "setup")
	invoke := "/v1/procedures/" + readOnlyName + "/invoke"
	deepArray := `{"code": "x", "metadata": {"a": ` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}}`
	deepObject := `{"phase": "automatic", "arguments": {"task_id": ` + strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000) + `}}`
	cases := []struct {
		name        string
		method      string
		path        string
		body        string
		contentType string
		header      map[string]string
		status      int
		code        string
	}{
		{name: "deeply nested arrays", path: "/v1/procedures", body: deepArray, status: 400, code: "invalid_request"},
		{name: "deeply nested objects", path: invoke, body: deepObject, status: 400, code: "invalid_request"},
		{name: "huge summary", path: "/v1/procedures", body: `{"code": "x", "summary": "` + strings.Repeat("s", 900<<10) + `"}`, status: 400, code: "invalid_request"},
		{name: "huge session id", path: "/v1/procedures", body: `{"code": "x", "session_id": "` + strings.Repeat("s", 600) + `"}`, status: 400, code: "invalid_request"},
		{name: "huge code", path: "/v1/procedures", body: `{"code": "` + strings.Repeat("x", 900<<10) + `"}`, status: 413, code: "payload_too_large"},
		{name: "huge body of whitespace", path: "/v1/procedures", body: `{"code": "x"}` + strings.Repeat(" ", 2<<20), status: 413, code: "payload_too_large"},
		{name: "huge idempotency key", path: "/v1/procedures", body: `{"code": "` + jsonEscape(readOnlyCode) + `"}`, header: map[string]string{"Idempotency-Key": strings.Repeat("k", 600)}, status: 400, code: "invalid_request"},
		{name: "invalid UTF-8 in a string", path: "/v1/procedures", body: "{\"code\": \"a = tools.get_retry_chain(task_id=1)\\nb = tools.get_task_jobs_summary(task_id=1)\\n# \xff\xfe\"}", status: 400, code: "invalid_request"},
		{name: "invalid UTF-8 in a key", path: invoke, body: "{\"phase\": \"automatic\", \"arguments\": {\"task_id\": 1, \"\xc3\x28\": 2}}", status: 400, code: "invalid_request"},
		{name: "raw NUL byte", path: "/v1/procedures", body: "{\"code\": \"x\x00\"}", status: 400, code: "invalid_request"},
		{name: "NUL byte between tokens", path: "/v1/procedures", body: "{\"code\":\x00 \"x\"}", status: 400, code: "invalid_request"},
		{name: "escaped NUL in code", path: "/v1/procedures", body: `{"code": "a = tools.get_retry_chain(task_id=1)\u0000"}`, status: 422, code: "invalid_code"},
		{name: "duplicate keys", path: "/v1/procedures", body: `{"code": "x", "code": "y"}`, status: 400, code: "invalid_request"},
		{name: "duplicate nested keys", path: invoke, body: `{"phase": "automatic", "arguments": {"task_id": 1, "task_id": 2}}`, status: 400, code: "invalid_request"},
		{name: "duplicate phase smuggling", path: invoke, body: `{"phase": "interactive", "phase": "automatic", "arguments": {"task_id": 1}}`, status: 400, code: "invalid_request"},
		{name: "trailing garbage", path: "/v1/procedures", body: `{"code": "x"} garbage`, status: 400, code: "invalid_request"},
		{name: "trailing brace", path: "/v1/procedures", body: `{"code": "x"}}`, status: 400, code: "invalid_request"},
		{name: "trailing bracket", path: invoke, body: `{"phase": "automatic", "arguments": {"task_id": 1}}]`, status: 400, code: "invalid_request"},
		{name: "two objects", path: "/v1/procedures", body: `{"code": "x"}{"code": "y"}`, status: 400, code: "invalid_request"},
		{name: "byte order mark", path: "/v1/procedures", body: "\xef\xbb\xbf{\"code\": \"x\"}", status: 400, code: "invalid_request"},
		{name: "XML", path: "/v1/procedures", body: `<code>x</code>`, contentType: "application/xml", status: 400, code: "invalid_request"},
		{name: "form", path: "/v1/procedures", body: `code=x`, contentType: "application/x-www-form-urlencoded", status: 400, code: "invalid_request"},
		{name: "JSON sent as text/plain", path: invoke, body: `{"phase": "automatic", "arguments": {"task_id": 1}}`, contentType: "text/plain", status: 400, code: "invalid_request"},
		{name: "JSON without a content type", path: invoke, body: `{"phase": "automatic", "arguments": {"task_id": 1}}`, contentType: "-", status: 400, code: "invalid_request"},
		{name: "null body", path: "/v1/procedures", body: `null`, status: 400, code: "invalid_request"},
		{name: "string body", path: "/v1/procedures", body: `"code"`, status: 400, code: "invalid_request"},
		{name: "number too large", path: invoke, body: `{"phase": "automatic", "arguments": {"task_id": 1e400}}`, status: 400, code: "invalid_request"},
		{name: "lone surrogate escape", path: "/v1/procedures", body: `{"code": "x", "summary": "\ud800"}`, status: 400, code: "invalid_request"},
		{name: "control character in a string", path: "/v1/procedures", body: "{\"code\": \"x\ty\"}", status: 400, code: "invalid_request"},
		{name: "NUL in a path", method: "GET", path: "/v1/procedures/%00", status: 404, code: "not_found"},
		{name: "dot segments in a path", method: "GET", path: "/v1/procedures/..%2f..%2fetc", status: 404, code: "not_found"},
		{name: "huge query value", method: "GET", path: "/v1/procedures?cause=" + strings.Repeat("c", 4000), status: 400, code: "invalid_request"},
		{name: "too many repeated values", method: "GET", path: "/v1/procedures?" + strings.Repeat("tool=a&", 60), status: 400, code: "invalid_request"},
		{name: "invalid UTF-8 in the query", method: "GET", path: "/v1/procedures?cause=%ff", status: 400, code: "invalid_request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up.reset()
			method := tc.method
			if method == "" {
				method = "POST"
			}
			q := req{Method: method, Path: tc.path, Header: map[string]string{}}
			if tc.body != "" {
				q.Body = tc.body
			}
			for k, v := range tc.header {
				q.Header[k] = v
			}
			switch tc.contentType {
			case "":
			case "-":
				q.Header["Content-Type"] = ""
			default:
				q.Header["Content-Type"] = tc.contentType
			}
			mustError(t, s.send(t, q), tc.status, tc.code)
			up.mustSeeNothing(t, tc.name)
			s.mustHealthy(t)
		})
	}
	t.Run("content type with parameters is fine", func(t *testing.T) {
		mustStatus(t, s.send(t, req{Method: "POST", Path: invoke, Body: `{"phase": "automatic", "arguments": {"task_id": 1}}`,
			Header: map[string]string{"Content-Type": "application/json; charset=utf-8"}}), 200)
	})
	t.Run("a slow body is cut off without harm", func(t *testing.T) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_, _ = conn.Write([]byte("POST /v1/procedures HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"code\":"))
		s.mustHealthy(t)
	})
	t.Run("garbage on the wire", func(t *testing.T) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = conn.Write([]byte("\x00\x01\x02 GARBAGE \xff\r\n\r\n"))
		line, _ := bufio.NewReader(conn).ReadString('\n')
		if !strings.Contains(line, "400") {
			t.Fatalf("answer to garbage: %q", line)
		}
		s.mustHealthy(t)
	})
}

func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// TestAuditNeverLeaks passes a unique marker as an argument value, in code,
// as a token, as an operator's reviewer and through tool results and tool
// errors, and checks that neither /v1/decisions nor the server's log output
// contains it.
func TestAuditNeverLeaks(t *testing.T) {
	t.Parallel()
	var raw [8]byte
	_, _ = rand.Read(raw[:])
	marker := "MARKER" + hex.EncodeToString(raw[:])
	dir := t.TempDir()
	file := filepath.Join(dir, "tokens.json")
	root := mustCreateToken(t, file, "root", "read,capture,invoke,grant,admin")
	up := mustUpstream(t)
	up.fail["search_panda_docs"] = "upstream broke: " + marker
	s := mustServe(t, serverOpts{Upstream: up, TokensFile: file, AllowMutating: true})
	s.token = root

	code := "# " + marker + "\na = tools.get_task_jobs_summary(task_id=task_id)\nb = tools.get_retry_chain(task_id=task_id)\nprint(\"" + marker + "\")\nreturn {\"a\": a, \"m\": \"" + marker + "\", \"n\": note}"
	name := mustCaptureName(t, s, code, "sess")
	mustCaptureName(t, s, killCode, "sess")
	failing := mustCaptureName(t, s, "a = tools.search_panda_docs(query=q)\nreturn [a, tools.get_retry_chain(task_id=1)]", "sess")
	// note and q are strings (task_id is typed an integer by the catalogue).
	noting := mustCaptureName(t, s, "a = tools.search_panda_docs(query=q)\nreturn tools.record_note(text=a)", "sess")
	out := mustStatus(t, s.invoke(t, name, map[string]any{"arguments": map[string]any{"task_id": 1, "note": marker}, "phase": "automatic"}), 200)
	if !strings.Contains(string(mustJSON(t, out)), marker) {
		t.Fatalf("the replay's own answer should carry the result: %v", out)
	}
	mustStatus(t, s.invoke(t, failing, map[string]any{"arguments": map[string]any{"q": marker, "task_id": 1}, "phase": "automatic"}), 200)
	mustError(t, s.invoke(t, noting, map[string]any{"arguments": map[string]any{"q": marker}, "phase": "automatic"}), 403, "denied")
	mustStatus(t, s.invoke(t, killName, map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "interactive", "reviewed_by": "op"}), 200)
	mustError(t, s.invoke(t, name, map[string]any{"arguments": map[string]any{"task_id": 1, marker: 1}, "phase": "automatic"}), 422, "invalid_arguments")
	mustError(t, s.send(t, req{Method: "GET", Path: "/v1/tools", Token: ptr(marker)}), 401, "unauthorized")
	mustError(t, s.send(t, req{Method: "POST", Path: "/v1/procedures", Body: map[string]any{"code": "import " + marker}}), 422, "invalid_code")
	mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/procedures/" + name + "/auto-run", Body: map[string]any{"enabled": true, "reason": "ok"}}), 200)

	decisions := s.get(t, "/v1/decisions?limit=1000")
	mustStatus(t, decisions, 200)
	if n := len(s.decisions(t, "limit=1000")); n < 5 {
		t.Fatalf("only %d decisions", n)
	}
	time.Sleep(50 * time.Millisecond) // the last log lines
	for what, text := range map[string]string{"/v1/decisions": string(decisions.Body), "the server log": s.logs.String()} {
		for _, secret := range []string{marker, root, strings.TrimPrefix(root, "pgt_")} {
			if i := strings.Index(text, secret); i >= 0 {
				t.Errorf("%s contains a secret: …%s…", what, text[max(0, i-200):min(len(text), i+100)])
			}
		}
	}
	if !regexp.MustCompile(`"actor":"root"`).MatchString(s.logs.String()) {
		t.Fatalf("the log does not name the actor")
	}
}

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestBrowserAttacksAreRefused: without tokens, a page reaching the server
// through DNS rebinding (a foreign Host) or a cross-site form post gets 403
// and changes nothing.
func TestBrowserAttacksAreRefused(t *testing.T) {
	t.Parallel()
	s := mustServe(t, serverOpts{})
	before := s.get(t, "/v1/tools").JSON(t)["revision"]
	tests := []struct {
		name   string
		header map[string]string
	}{
		{"dns rebinding", map[string]string{"Host": "evil.example:8474"}},
		{"cross-site post", map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{"foreign origin", map[string]string{"Origin": "http://evil.example"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.send(t, req{Method: "PUT", Path: "/v1/tools", Body: map[string]any{"tools": []any{map[string]any{"name": "kill_job", "read_only": true}}}, Header: tc.header})
			mustError(t, r, 403, "forbidden")
		})
	}
	if after := s.get(t, "/v1/tools").JSON(t)["revision"]; after != before {
		t.Fatalf("the catalogue changed: %v -> %v", before, after)
	}
}
