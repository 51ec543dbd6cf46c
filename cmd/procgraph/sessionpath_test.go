package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestSessionPolicyPaths: a session id travels in the path of
// /v1/sessions/{id}/policies as one escaped segment (a "/" as %2F, ".." as
// %2E%2E) and reaches exactly its own session's policies; hostile ids —
// empty, unescaped "..", over-long, control characters, invalid UTF-8 —
// get a clear 4xx and neither read nor revoke any session's policies; a
// turn under a session id with a control character (a NUL would make "p"
// a key prefix of "p\x00x") is refused.
func TestSessionPolicyPaths(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	a := mustTurnServer(t, up)
	// Each session's policy is for its own code (its own hash).
	hashes := map[string]string{}
	sessions := []string{"inv/42", "inv", "42", "..", ".", "a", "a/..", "x y", "p", "%2F"}
	for i, s := range sessions {
		body := killTurn(s, 1)
		body["code"] = fmt.Sprintf("return tools.kill_job(panda_id=panda_id + %d)", i)
		id := a.mustPending(t, body)
		mustStatus(t, a.resolve(t, a.op, id, map[string]any{"choice": "auto_run"}), 200)
		hashes[s] = mustStatus(t, a.as(t, a.agent, "GET", "/v1/turns/"+id, nil), 200)["turn"].(map[string]any)["code_hash"].(string)
	}
	path := func(session string) string { return "/v1/sessions/" + pathSegment(session) + "/policies" }
	policiesOf := func(session string) []any {
		t.Helper()
		return mustStatus(t, a.as(t, a.viewer, "GET", path(session), nil), 200)["policies"].([]any)
	}
	requireOwn := func(when string) {
		t.Helper()
		for _, s := range sessions {
			if ps := policiesOf(s); len(ps) != 1 || ps[0].(map[string]any)["code_hash"] != hashes[s] {
				t.Fatalf("%s: GET %s: %v, want its one policy %s", when, path(s), ps, hashes[s][:12])
			}
		}
	}
	requireOwn("escaped")

	for _, id := range []string{"p\x00x", "p\n", "\x1b[2J", "\u0085"} {
		mustError(t, a.submit(t, killTurn(id, 1)), 400, "invalid_request")
	}
	hostile := []struct {
		name, raw string // raw is the path segment as sent
		status    int    // 0: any 4xx (the mux redirects unclean paths)
	}{
		{"empty", "", 0},
		{"dot dot", "..", 0},
		{"over-long", strings.Repeat("s", 513), 400},
		{"NUL", "p%00", 400},
		{"NUL and more", "p%00x", 400},
		{"newline", "a%0A", 400},
		{"escape", "%1B%5B2J", 400},
		{"C1", "%C2%85", 400},
		{"invalid UTF-8", "%FF%FE", 400},
	}
	for _, c := range hostile {
		t.Run(c.name, func(t *testing.T) {
			for _, q := range []req{
				{Method: "GET", Path: "/v1/sessions/" + c.raw + "/policies", Token: &a.op},
				{Method: "DELETE", Path: "/v1/sessions/" + c.raw + "/policies", Token: &a.op},
				{Method: "DELETE", Path: "/v1/sessions/" + c.raw + "/policies/" + hashes["p"][:12], Token: &a.op},
			} {
				r := a.send(t, q)
				if r.Status < 400 || r.Status >= 500 || (c.status != 0 && r.Status != c.status) {
					t.Errorf("%s %s: %d %s", q.Method, q.Path, r.Status, r.Body)
				}
				if c.status == 400 {
					if d := mustError(t, r, 400, "invalid_request"); d["field"] != "session_id" {
						t.Errorf("%s %s: details %v", q.Method, q.Path, d)
					}
				}
			}
		})
	}
	requireOwn("after the hostile requests")

	// Revoking an escaped session revokes its policy only.
	for _, s := range []string{"inv/42", ".."} {
		if out := mustStatus(t, a.as(t, a.op, "DELETE", path(s)+"/"+hashes[s][:12], nil), 200); out["revoked"] != float64(1) {
			t.Fatalf("revoke %s: %v", s, out)
		}
	}
	for _, s := range sessions {
		want := 1
		if s == "inv/42" || s == ".." {
			want = 0
		}
		if n := len(policiesOf(s)); n != want {
			t.Fatalf("after revoking inv/42 and .., %q holds %d policies", s, n)
		}
	}
}
