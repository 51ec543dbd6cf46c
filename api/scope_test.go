package api

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
)

// scopeCase is one route and the scope docs/api.md ("Auth") gives it: read
// browses and finds, capture captures, invoke replays, grant sets auto-run
// and promotes, admin replaces the catalogue and retires procedures; "" is an operations endpoint
// open without a token; anyToken is a route any valid token may call; "a+b"
// needs both (admin+grant: a route whose answer carries recordings).
type scopeCase struct {
	method, pattern string // the route as the router knows it
	scope           string
	path            string // a concrete request path
	body            any    // nil: no body
}

// scopeCases lists every route of the router with its scope and a request
// that the holder of that scope gets answered with 2xx. It is written from
// docs/api.md, not from the route table, so a scope changed in the table fails.
func scopeCases(name, hash string, tools any) []scopeCase {
	p := "/v1/procedures/" + name
	return []scopeCase{
		{"GET", "/", "", "/", nil},
		{"GET", "/healthz", "", "/healthz", nil},
		{"GET", "/readyz", "", "/readyz", nil},
		{"GET", "/metrics", "", "/metrics", nil},
		{"GET", "/openapi.json", "", "/openapi.json", nil},
		// First: the procedure is demoted for it (TestRouteScopes), and
		// lifted by it before the cases that run it.
		{"DELETE", "/v1/procedures/{name}/demotion", "admin", p + "/demotion", map[string]any{"reason": "scope test"}},
		{"GET", "/v1/whoami", anyToken, "/v1/whoami", nil},
		{"GET", "/v1/upstreams", "admin", "/v1/upstreams", nil},
		{"GET", "/v1/tools", "read", "/v1/tools", nil},
		{"PUT", "/v1/tools", "admin", "/v1/tools", map[string]any{"tools": tools}},
		{"POST", "/v1/procedures", "capture", "/v1/procedures", map[string]any{"code": readOnlyCode, "session_id": "scope"}},
		{"GET", "/v1/procedures", "read", "/v1/procedures?limit=5", nil},
		{"GET", "/v1/procedures/tools", "read", "/v1/procedures/tools", nil},
		{"GET", "/v1/procedures/{name}", "read", p, nil},
		{"GET", "/v1/procedures/{name}/versions", "read", p + "/versions", nil},
		{"GET", "/v1/procedures/{name}/versions/{code_hash}", "read", p + "/versions/" + hash, nil},
		{"POST", "/v1/procedures/{name}/versions/{code_hash}/promote", "grant", p + "/versions/" + hash + "/promote", map[string]any{"reason": "scope test"}},
		{"POST", "/v1/procedures/{name}/versions/{code_hash}/accept-drift", "grant", p + "/versions/" + hash + "/accept-drift", map[string]any{"reason": "scope test"}},
		{"GET", "/v1/drift", "read", "/v1/drift", nil},
		{"PUT", "/v1/procedures/{name}/auto-run", "grant", p + "/auto-run", map[string]any{"enabled": true}},
		{"DELETE", "/v1/procedures/{name}/auto-run", "grant", p + "/auto-run", map[string]any{"reason": "scope test"}},
		{"POST", "/v1/procedures/{name}/verify", "invoke", p + "/verify", map[string]any{}},
		{"GET", "/v1/procedures/{name}/recordings", "grant", p + "/recordings", nil},
		{"DELETE", "/v1/procedures/{name}/recordings", "grant", p + "/recordings", map[string]any{"reason": "scope test"}},
		{"PUT", "/v1/procedures/{name}/retirement", "admin", p + "/retirement", map[string]any{"reason": "scope test"}},
		{"DELETE", "/v1/procedures/{name}/retirement", "admin", p + "/retirement", map[string]any{"reason": "scope test"}},
		{"POST", "/v1/procedures/{name}/invoke", "invoke", p + "/invoke", map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "automatic"}},
		{"GET", "/v1/causes", "read", "/v1/causes", nil},
		{"GET", "/v1/causes/{name}", "read", "/v1/causes/scope-cause", nil},
		{"GET", "/v1/graph", "read", "/v1/graph?procedure=" + name, nil},
		{"GET", "/v1/changes", "read", "/v1/changes", nil},
		{"GET", "/v1/decisions", "read", "/v1/decisions", nil},
		{"GET", "/v1/export", "admin", "/v1/export", nil},
		{"GET", "/v1/backup", "admin+grant", "/v1/backup", nil},
		{"POST", "/v1/tokens", "admin", "/v1/tokens", map[string]any{"holder": "scope-t", "scopes": []string{"read"}}},
		{"POST", "/v1/tokens/{holder}/rotate", "admin", "/v1/tokens/scope-t/rotate", nil},
		{"DELETE", "/v1/tokens/{holder}", "admin", "/v1/tokens/scope-t", nil},
		{"GET", "/v1/tokens", "admin", "/v1/tokens", nil},
	}
}

// anyToken is the scope case of a route that needs a valid token and no
// particular scope.
const anyToken = "any token"

// scopeHolders are one token per scope, holder and token named after it.
var scopeHolders = []string{"read", "capture", "invoke", "grant", "admin"}

func scopeAuthenticator(tb testing.TB) *auth.Authenticator {
	tb.Helper()
	f := &auth.TokensFile{}
	for _, sc := range scopeHolders {
		f.Tokens = append(f.Tokens, auth.TokenEntry{Name: "holder-" + sc, SHA256: auth.HashToken("tok-" + sc), Scopes: []string{sc}})
	}
	f.Tokens = append(f.Tokens, auth.TokenEntry{Name: "operator", SHA256: auth.HashToken("tok-operator"), Scopes: []string{"invoke", "grant"}},
		auth.TokenEntry{Name: "holder-admin.grant", SHA256: auth.HashToken("tok-admin+grant"), Scopes: []string{"admin", "grant"}})
	if err := f.Validate(); err != nil {
		tb.Fatal(err)
	}
	return auth.NewAuthenticator(f)
}

// TestRouteScopes: every route answers the holder of its scope, refuses
// the holder of any other scope with 403 forbidden naming the scope, and
// refuses a request without a token with 401; the operations endpoints
// need no token. Every route of the router has a case.
func TestRouteScopes(t *testing.T) {
	e := mustEnv(t, envOpts{auth: scopeAuthenticator(t)})
	ctx := context.Background()
	out, err := e.svc.Capture(ctx, procedures.CaptureRequest{Code: readOnlyCode, SessionID: "setup", Cause: &procedures.CauseInput{Name: "scope-cause"}})
	if err != nil {
		t.Fatal(err)
	}
	name, hash := out.Procedure.Name, out.Procedure.CodeHash
	cat, err := e.svc.Catalogue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The version is made stale, so that accept-drift has something to accept.
	tools := slices.Clone(cat.Tools)
	for i := range tools {
		if tools[i].Name == "get_jobs" {
			tools[i].OutputSchema = map[string]any{"type": "object"}
		}
	}
	if cat, err = e.svc.PutCatalogue(ctx, tools, "scope test"); err != nil {
		t.Fatal(err)
	}
	// Demoted by two callers' failures, so that an admin has a demotion to lift.
	for i, caller := range []string{"a", "b"} {
		if _, err := e.store.RecordUse(ctx, procedures.UseInput{Name: name, UsageKey: "k", At: time.Now(), DemoteAfter: 2,
			Run: &health.Run{Failure: health.FailureToolError, At: time.Now(), Caller: caller}}); err != nil {
			t.Fatal(err)
		}
		if p, _ := e.svc.Get(ctx, name); p.Demoted != (i == 1) {
			t.Fatalf("after %d failures, demoted %v", i+1, p.Demoted)
		}
	}
	cases := append(scopeCases(name, hash, cat.Tools), turnScopeCases(t, e)...)

	listed := map[string]bool{}
	for _, c := range cases {
		listed[c.method+" "+c.pattern] = true
	}
	if err := chi.Walk(e.srv.Router(), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if !listed[method+" "+route] {
			t.Errorf("route %s %s has no scope case: add it to scopeCases with its docs/api.md scope", method, route)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	for _, c := range cases {
		t.Run(c.method+" "+c.pattern, func(t *testing.T) {
			if c.scope == "" {
				if st, body := e.send(t, c, ""); st != http.StatusOK {
					t.Fatalf("without a token: %d %s", st, body)
				}
				return
			}
			st, body := e.send(t, c, "")
			if st != http.StatusUnauthorized || answerCode(body) != "unauthorized" {
				t.Fatalf("without a token: %d %s", st, body)
			}
			if st, body := e.send(t, c, "tok-unknown"); st != http.StatusUnauthorized || answerCode(body) != "unauthorized" {
				t.Fatalf("with a wrong token: %d %s", st, body)
			}
			if c.scope == anyToken {
				for _, holder := range scopeHolders {
					if st, body := e.send(t, c, "tok-"+holder); st < 200 || st > 299 {
						t.Fatalf("holder of %s: %d %s", holder, st, body)
					}
				}
				return
			}
			// A scope "a+b" needs both: a holder of one is refused naming
			// the first it lacks.
			needs := strings.Split(c.scope, "+")
			for _, holder := range scopeHolders {
				if holder == c.scope {
					continue
				}
				lacks := needs[0]
				if holder == lacks && len(needs) > 1 {
					lacks = needs[1]
				}
				st, body := e.send(t, c, "tok-"+holder)
				if st != http.StatusForbidden || answerCode(body) != "forbidden" || !strings.Contains(string(body), `"scope":"`+lacks+`"`) {
					t.Fatalf("holder of %s: %d %s; want 403 forbidden naming scope %s", holder, st, body, lacks)
				}
			}
			if st, body := e.send(t, c, "tok-"+c.scope); st < 200 || st > 299 {
				t.Fatalf("holder of %s: %d %s", c.scope, st, body)
			}
		})
	}
}

// send makes c's request with token ("" for none).
func (e *env) send(tb testing.TB, c scopeCase, token string) (int, []byte) {
	tb.Helper()
	client := &http.Client{Transport: bearerTransport(token)}
	return e.do(tb, client, c.method, c.path, c.body)
}

// bearerTransport adds a bearer token to every request ("" adds none).
type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if b != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+string(b))
	}
	return http.DefaultTransport.RoundTrip(r)
}

// answerCode is error.code of an error body, "" when it is not one.
func answerCode(body []byte) string {
	var b struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &b)
	return b.Error.Code
}

// TestReviewedByNeedsGrant: reviewed_by approves a state-changing replay
// only from a caller holding grant; from a caller with invoke alone it
// counts for nothing (denied, review_required).
func TestReviewedByNeedsGrant(t *testing.T) {
	e := mustEnv(t, envOpts{auth: scopeAuthenticator(t), allowMutating: true})
	out, err := e.svc.Capture(context.Background(), procedures.CaptureRequest{
		Code: "jobs = tools.get_jobs(task_id=task_id)\nreturn tools.kill_job(task_id=task_id)", SessionID: "setup"})
	if err != nil {
		t.Fatal(err)
	}
	c := scopeCase{method: "POST", path: "/v1/procedures/" + out.Procedure.Name + "/invoke",
		body: map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "interactive", "reviewed_by": "op"}}
	for _, tc := range []struct {
		holder, reason string
		status         int
	}{
		{"invoke", audit.ReasonReviewRequired, http.StatusForbidden},
		{"operator", audit.ReasonOperatorReviewed, http.StatusOK},
	} {
		st, body := e.send(t, c, "tok-"+tc.holder)
		var ans struct {
			Decision audit.Decision `json:"decision"`
			Error    struct {
				Details struct {
					Decision audit.Decision `json:"decision"`
				} `json:"details"`
			} `json:"error"`
		}
		_ = json.Unmarshal(body, &ans)
		reason := ans.Decision.Reason + ans.Error.Details.Decision.Reason
		if st != tc.status || reason != tc.reason {
			t.Fatalf("reviewed_by from the %s holder: %d, reason %q; want %d %s\n%s", tc.holder, st, reason, tc.status, tc.reason, body)
		}
	}
}

// TestRecordingsScope: one rule for who may read recordings (tool output),
// on every route that carries them. GET /v1/export?with_recordings=true
// and GET /v1/backup (a copy of the store file, recordings included) need
// the grant scope besides admin: an admin-only token is refused 403 naming
// grant (nothing streamed), a token with both gets the dump or the copy;
// an export without recordings needs admin alone, as before.
func TestRecordingsScope(t *testing.T) {
	a := &auth.TokensFile{Tokens: []auth.TokenEntry{
		{Name: "admin", SHA256: auth.HashToken("tok-admin"), Scopes: []string{"admin"}},
		{Name: "both", SHA256: auth.HashToken("tok-both"), Scopes: []string{"admin", "grant"}},
		{Name: "grant", SHA256: auth.HashToken("tok-grant"), Scopes: []string{"grant"}},
	}}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	e := mustEnv(t, envOpts{auth: auth.NewAuthenticator(a)})
	for _, c := range []struct {
		name, token, path string
		status            int
		scope             string
	}{
		{"export with recordings, admin only", "tok-admin", "/v1/export?with_recordings=true", http.StatusForbidden, "grant"},
		{"export with recordings, grant only", "tok-grant", "/v1/export?with_recordings=true", http.StatusForbidden, "admin"},
		{"export with recordings, both", "tok-both", "/v1/export?with_recordings=true", http.StatusOK, ""},
		{"export, admin only", "tok-admin", "/v1/export", http.StatusOK, ""},
		{"export without recordings, admin only", "tok-admin", "/v1/export?with_recordings=false", http.StatusOK, ""},
		{"export, a bad flag", "tok-both", "/v1/export?with_recordings=maybe", http.StatusBadRequest, ""},
		{"backup, admin only", "tok-admin", "/v1/backup", http.StatusForbidden, "grant"},
		{"backup, grant only", "tok-grant", "/v1/backup", http.StatusForbidden, "admin"},
		{"backup, both", "tok-both", "/v1/backup", http.StatusOK, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, body := e.send(t, scopeCase{method: "GET", path: c.path}, c.token)
			if st != c.status {
				t.Fatalf("%s with %s: %d; want %d", c.path, c.token, st, c.status)
			}
			switch {
			case c.scope != "" && (answerCode(body) != "forbidden" || !strings.Contains(string(body), `"scope":"`+c.scope+`"`)):
				t.Errorf("%s with %s: %s; want forbidden naming scope %s", c.path, c.token, body, c.scope)
			case st == http.StatusOK && strings.HasPrefix(c.path, "/v1/export") && !strings.Contains(string(body), `"type":"trailer"`):
				t.Errorf("%s with %s: no whole dump:\n%.300s", c.path, c.token, body)
			case st == http.StatusOK && c.path == "/v1/backup" && len(body) == 0:
				t.Errorf("%s with %s: an empty copy", c.path, c.token)
			}
		})
	}
}
