package main

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/tokens"
)

// Tests of docs/design.md "Tokens in the store": token create, list,
// rotate and revoke through the running server and offline, taking
// effect without a restart on every instance sharing the store, audited,
// never logged.

// tokenEnv is the environment of a CLI command against s with token.
func tokenEnv(s *server, token string) map[string]string {
	return map[string]string{"PROCGRAPH_URL": s.URL, "PROCGRAPH_TOKEN": token}
}

// mustTokenMade runs a token command that prints a token and returns it.
func mustTokenMade(tb testing.TB, env map[string]string, args ...string) string {
	tb.Helper()
	code, out, errOut := runMainWith(tb, env, args...)
	if code != 0 {
		tb.Fatalf("%s: exit %d: %s%s", strings.Join(args, " "), code, out, errOut)
	}
	tok := strings.TrimSpace(out)
	if strings.Count(out, "\n") != 1 || !strings.HasPrefix(tok, "pgt_") {
		tb.Fatalf("%s printed %q, want the token alone", strings.Join(args, " "), out)
	}
	return tok
}

// whoami is GET /v1/whoami on s with token: the status and the scopes.
func whoami(tb testing.TB, s *server, token string) (int, []string) {
	tb.Helper()
	r := s.send(tb, req{Method: "GET", Path: "/v1/whoami", Token: &token})
	if r.Status != 200 {
		return r.Status, nil
	}
	var me struct {
		Scopes []string `json:"scopes"`
	}
	r.Into(tb, &me)
	return r.Status, me.Scopes
}

// eventually polls cond until it holds, failing after a generous
// deadline: revocation is asserted to arrive, not timed.
func eventuallyTrue(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("%s: not within the deadline", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// withinSync waits for cond, a request to server s, to hold after a
// token change that committed before the call: as auth.SyncEvery promises,
// a request begun SyncEvery after the change finds it (the copy it is
// checked against was read since, or is read again first). It polls, and
// fails at the first request begun that late that does not find it — at
// once when the change is never seen, however slow the machine: a request
// begun earlier may still miss it, and is asked again.
func withinSync(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	changed := time.Now()
	for {
		begun := time.Now()
		if cond() {
			return
		}
		if begun.Sub(changed) >= auth.SyncEvery {
			tb.Fatalf("%s: a request begun %v after the change does not find it (auth.SyncEvery %v)", what, begun.Sub(changed).Round(time.Millisecond), auth.SyncEvery)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// refusedBy requires every server to refuse token with 401 within
// auth.SyncEvery of the change (withinSync).
func refusedBy(tb testing.TB, token, what string, servers ...*server) {
	tb.Helper()
	for _, s := range servers {
		withinSync(tb, what+" on "+s.URL, func() bool { st, _ := whoami(tb, s, token); return st == 401 })
	}
}

// acceptedBy requires every server to accept token with exactly scopes
// within auth.SyncEvery of the change (withinSync).
func acceptedBy(tb testing.TB, token string, scopes []string, what string, servers ...*server) {
	tb.Helper()
	for _, s := range servers {
		withinSync(tb, what+" on "+s.URL, func() bool {
			st, got := whoami(tb, s, token)
			return st == 200 && slices.Equal(got, scopes)
		})
	}
}

// tokenList is `token list --json` as env and args say.
func tokenList(tb testing.TB, env map[string]string, args ...string) map[string]api_tokenView {
	tb.Helper()
	code, out, errOut := runMainWith(tb, env, append([]string{"token", "list", "--json"}, args...)...)
	if code != 0 {
		tb.Fatalf("token list: exit %d: %s", code, errOut)
	}
	var l struct {
		Tokens []api_tokenView `json:"tokens"`
	}
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		tb.Fatalf("token list --json: %v\n%s", err, out)
	}
	byHolder := map[string]api_tokenView{}
	for _, t := range l.Tokens {
		byHolder[t.Holder] = t
	}
	return byHolder
}

// api_tokenView is a token as the API and `token list --json` show it.
type api_tokenView struct {
	Holder    string   `json:"holder"`
	Scopes    []string `json:"scopes"`
	Status    string   `json:"status"`
	CreatedBy string   `json:"created_by"`
	ExpiresAt string   `json:"expires_at"`
	LastUsed  string   `json:"last_used_at"`
}

// mustNoTokenIn fails when text holds any of the tokens or their hashes.
func mustNoTokenIn(tb testing.TB, what, text string, toks ...string) {
	tb.Helper()
	for _, tok := range toks {
		if strings.Contains(text, tok) || strings.Contains(text, auth.HashToken(tok)) {
			tb.Fatalf("%s holds a token or its hash:\n%s", what, text)
		}
	}
}

// TestTokenCommandsThroughTheServer: an admin creates, lists, rotates and
// revokes tokens through the running server with the CLI; each takes
// effect at once (no restart), a rotated token keeps its scopes, each
// change is audited (holder, scopes, who; never the token), no token is
// logged or listed, and a non-admin is refused.
func TestTokenCommandsThroughTheServer(t *testing.T) {
	s, ft := mustServeFirstTokens(t, serverOpts{})
	op := tokenEnv(s, ft.operator)

	alice := mustTokenMade(t, op, "token", "create", "--server", "--name", "alice", "--scopes", "read,invoke", "--expires", "30d")
	acceptedBy(t, alice, []string{"read", "invoke"}, "a token created through the server", s)
	mustError(t, s.send(t, req{Method: "PUT", Path: "/v1/procedures/x/auto-run", Body: map[string]any{"enabled": true}, Token: &alice}), 403, "forbidden")

	l := tokenList(t, op, "--server")
	if a := l["alice"]; a.Status != "live" || a.CreatedBy != "operator" || a.ExpiresAt == "" || !slices.Equal(a.Scopes, []string{"read", "invoke"}) {
		t.Fatalf("alice listed as %+v", a)
	}
	if l["operator"].Status != "live" || l["agent"].Status != "live" {
		t.Fatalf("the first tokens listed as %+v", l)
	}
	_, out, _ := runMainWith(t, op, "token", "list", "--server")
	if !strings.Contains(out, "alice") || !strings.Contains(out, "read,invoke") {
		t.Fatalf("token list:\n%s", out)
	}
	mustNoTokenIn(t, "token list", out, alice, ft.operator, ft.agent)

	rotated := mustTokenMade(t, op, "token", "rotate", "alice", "--server")
	refusedBy(t, alice, "alice's token rotated away", s)
	acceptedBy(t, rotated, []string{"read", "invoke"}, "alice's rotated token (the same scopes)", s)

	code, out, errOut := runMainWith(t, op, "token", "revoke", "alice", "--server")
	if code != 0 || !strings.Contains(out, "revoked the token of alice") {
		t.Fatalf("token revoke: exit %d %s%s", code, out, errOut)
	}
	refusedBy(t, rotated, "alice's revoked token", s)
	if l := tokenList(t, op, "--server"); l["alice"].Status != "revoked" {
		t.Fatalf("alice listed as %+v after the revoke", l["alice"])
	}
	if code, _, errOut := runMainWith(t, op, "token", "revoke", "alice", "--server"); code != 1 || !strings.Contains(errOut, "not_found") {
		t.Fatalf("revoking a revoked token: exit %d %s", code, errOut)
	}

	agent := tokenEnv(s, ft.agent)
	if code, _, errOut := runMainWith(t, agent, "token", "create", "--server", "--name", "mallory", "--scopes", "admin"); code != 1 || !strings.Contains(errOut, "forbidden") || !strings.Contains(errOut, "admin") {
		t.Fatalf("the agent created a token: exit %d %s", code, errOut)
	}
	if code, _, errOut := runMainWith(t, agent, "token", "list", "--server"); code != 1 || !strings.Contains(errOut, "forbidden") {
		t.Fatalf("the agent listed the tokens: exit %d %s", code, errOut)
	}

	r := s.get(t, "/v1/decisions?kind=token")
	var ds struct {
		Decisions []audit.Decision `json:"decisions"`
	}
	r.Into(t, &ds)
	reasons := map[string]int{}
	for _, d := range ds.Decisions {
		reasons[d.Reason]++
		if d.Reason != audit.ReasonTokenCreated || d.Actor != audit.ActorProcgraph {
			if d.Actor != "operator" || !strings.Contains(d.Note, "holder alice") || !strings.Contains(d.Note, "scopes read,invoke") {
				t.Errorf("audit record %+v: want actor operator, holder alice and its scopes", d)
			}
		}
	}
	if reasons[audit.ReasonTokenCreated] != 3 || reasons[audit.ReasonTokenRotated] != 1 || reasons[audit.ReasonTokenRevoked] != 1 {
		t.Fatalf("token audit records by reason: %v (want 3 created: operator, agent, alice; 1 rotated; 1 revoked)", reasons)
	}
	mustNoTokenIn(t, "the audit log", string(r.Body), alice, rotated, ft.operator, ft.agent)
	mustNoTokenIn(t, "the log", s.logs.String(), alice, rotated, ft.operator, ft.agent)
}

// TestTokenCommandsOffline: with the server stopped, token create, list,
// rotate and revoke act on the store itself (--store embedded --data),
// audited as the person running them; a serve started after sees them;
// while a serve holds the store, the command names --server.
func TestTokenCommandsOffline(t *testing.T) {
	s, ft := mustServeFirstTokens(t, serverOpts{})
	data := s.Data
	st := []string{"--store", "embedded", "--data", data}
	if code, _, errOut := runMainWith(t, nil, append([]string{"token", "list"}, st...)...); code != 1 || !strings.Contains(errOut, "--server") {
		t.Fatalf("token list on a store a serve holds: exit %d %s", code, errOut)
	}
	s.Stop(t)

	bob := mustTokenMade(t, nil, append([]string{"token", "create", "--name", "bob", "--scopes", "read"}, st...)...)
	carol := mustTokenMade(t, nil, append([]string{"token", "create", "--name", "carol", "--scopes", "read,grant"}, st...)...)
	carol2 := mustTokenMade(t, nil, append([]string{"token", "rotate", "carol"}, st...)...)
	if code, _, errOut := runMainWith(t, nil, append([]string{"token", "revoke", "bob"}, st...)...); code != 0 {
		t.Fatalf("token revoke offline: exit %d %s", code, errOut)
	}
	l := tokenList(t, nil, st...)
	if l["bob"].Status != "revoked" || l["carol"].Status != "live" || !slices.Equal(l["carol"].Scopes, []string{"read", "grant"}) || l["carol"].CreatedBy != operator() {
		t.Fatalf("listed offline: %+v", l)
	}

	again := mustServe(t, serverOpts{Data: data, DefaultAuth: true})
	if st, _ := whoami(t, again, bob); st != 401 {
		t.Fatalf("bob's revoked token: %d", st)
	}
	if st, _ := whoami(t, again, carol); st != 401 {
		t.Fatalf("carol's rotated-away token: %d", st)
	}
	acceptedBy(t, carol2, []string{"read", "grant"}, "carol's token made offline", again)
	acceptedBy(t, ft.agent, []string{"read", "capture", "invoke"}, "the first agent token", again)
	r := again.send(t, req{Method: "GET", Path: "/v1/decisions?kind=token", Token: &ft.operator})
	if !strings.Contains(string(r.Body), `"actor":"`+operator()+`"`) {
		t.Fatalf("no offline token change audited as %s:\n%s", operator(), r.Body)
	}
	mustNoTokenIn(t, "the audit log", string(r.Body), bob, carol, carol2)
}

// TestExpiredTokenRefused: a token past its expiry is refused (401,
// "expired"), whether it expired before the server read it or after; a
// token cannot be created already expired.
func TestExpiredTokenRefused(t *testing.T) {
	t.Chdir(t.TempDir())
	data := filepath.Join(t.TempDir(), "p.db")
	st, err := embedded.Open(data, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := tokens.NewManager(st, procedures.NewRecorder(st, procedures.RecorderOptions{}))
	if _, err := m.Create(context.Background(), tokens.CreateRequest{Holder: "past", Scopes: []string{"read"}, ExpiresAt: time.Now().Add(-time.Hour)}); err == nil {
		t.Fatal("a token created already expired")
	}
	soon, err := m.Create(context.Background(), tokens.CreateRequest{Holder: "soon", Scopes: []string{"read"}, ExpiresAt: time.Now().Add(1500 * time.Millisecond), Actor: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	// An expiry already past, as a store may hold it (a clock moved on).
	past := auth.TokenRecord{Holder: "past", SHA256: auth.HashToken("pgt_past-token-of-the-test"), Scopes: []string{"read"},
		CreatedAt: time.Now().Add(-2 * time.Hour), CreatedBy: "tester", ExpiresAt: time.Now().Add(-time.Hour)}
	if _, err := st.CreateToken(context.Background(), past, false, mustTokenDecision(t, past)); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	live := mustTokenMade(t, nil, "token", "create", "--store", "embedded", "--data", data, "--name", "live", "--scopes", "read")
	s := mustServe(t, serverOpts{Data: data, DefaultAuth: true})
	acceptedBy(t, live, []string{"read"}, "a token without expiry", s)
	pastToken := "pgt_past-token-of-the-test"
	r := s.send(t, req{Method: "GET", Path: "/v1/whoami", Token: &pastToken})
	if r.Status != 401 || !strings.Contains(string(r.Body), "expired") {
		t.Fatalf("an expired token: %d %s", r.Status, r.Body)
	}
	eventuallyTrue(t, "a token refused once it expired", func() bool {
		r := s.send(t, req{Method: "GET", Path: "/v1/whoami", Token: &soon.Token})
		return r.Status == 401 && strings.Contains(string(r.Body), "expired")
	})
}

// mustTokenDecision is rec's creation record, built as the Manager builds
// it.
func mustTokenDecision(tb testing.TB, rec auth.TokenRecord) audit.Decision {
	tb.Helper()
	d, err := procedures.NewRecorder(nil, procedures.RecorderOptions{}).Build(tokens.Decision(audit.ReasonTokenCreated, "tester", rec))
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// serveNeo4j runs the tests that serve on the Neo4j at NEO4J_URI: they
// empty its tokens, so .ci/run runs them after graph/neo4j's suite, never
// beside it (both empty what they use).
var serveNeo4j = flag.Bool("neo4j.serve", false, "run the tests that serve on the Neo4j at NEO4J_URI (they remove its tokens: never beside graph/neo4j's suite)")

// neo4jForTokens sets the NEO4J_* environment of the test Neo4j, with its
// tokens (and their audit records) removed so that a serve's first start
// creates them; it skips without -neo4j.serve and NEO4J_URI.
func neo4jForTokens(t *testing.T) {
	t.Helper()
	uri := neo4jEnv["NEO4J_URI"]
	if uri == "" || !*serveNeo4j {
		t.Skip("needs NEO4J_URI and -neo4j.serve (a Neo4j this package may write to)")
	}
	for k, v := range neo4jEnv {
		t.Setenv(k, v)
	}
	ctx := context.Background()
	drv, err := neo4j.NewDriverWithContext(uri, neo4j.BasicAuth(os.Getenv("NEO4J_USERNAME"), os.Getenv("NEO4J_PASSWORD"), ""))
	if err != nil {
		t.Fatal(err)
	}
	clean := func() {
		for _, q := range []string{"MATCH (n) WHERE n:Token OR n:TokenRevision DETACH DELETE n", "MATCH (d:Decision {kind: 'token'}) DELETE d"} {
			if _, err := neo4j.ExecuteQuery(ctx, drv, q, nil, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(os.Getenv("NEO4J_DATABASE"))); err != nil {
				t.Fatal(err)
			}
		}
	}
	clean()
	t.Cleanup(func() { clean(); _ = drv.Close(ctx) })
}

// TestTokensTwoInstancesOnNeo4j: two serves on one Neo4j, started as the
// README says (NEO4J_URI and no tokens file): the first creates the
// operator and agent tokens in the store (their files in the working
// directory), the second creates none and accepts them; a token created,
// rotated or revoked through one instance, or offline against the store,
// is accepted or refused by both without a restart (by a request begun a
// second after the change: withinSync).
func TestTokensTwoInstancesOnNeo4j(t *testing.T) {
	neo4jForTokens(t)
	dir := t.TempDir()
	t.Chdir(dir)
	serve := func() *server {
		s, err := startMain(t, []string{"serve", "--addr", "127.0.0.1:0", "--sandbox-workers", "1"})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := serve()
	ft := mustFirstTokens(t, filepath.Join(dir, "none.db"))
	b := serve()
	if !strings.Contains(a.logs.String(), `"created":true`) || !strings.Contains(b.logs.String(), `"created":false`) {
		t.Fatalf("first tokens: a %s\nb %s", a.logs.String(), b.logs.String())
	}
	acceptedBy(t, ft.operator, []string{"read", "capture", "invoke", "grant", "admin"}, "the operator token", a, b)
	acceptedBy(t, ft.agent, []string{"read", "capture", "invoke"}, "the agent token", a, b)

	alice := mustTokenMade(t, tokenEnv(a, ft.operator), "token", "create", "--server", "--name", "alice", "--scopes", "read")
	acceptedBy(t, alice, []string{"read"}, "a token created through a", a, b)
	if code, out, errOut := runMainWith(t, tokenEnv(b, ft.operator), "token", "revoke", "alice", "--server"); code != 0 {
		t.Fatalf("revoke through b: exit %d %s%s", code, out, errOut)
	}
	refusedBy(t, alice, "a token revoked through b", a, b)

	bob := mustTokenMade(t, nil, "token", "create", "--store", "neo4j", "--name", "bob", "--scopes", "read,grant")
	acceptedBy(t, bob, []string{"read", "grant"}, "a token created offline", a, b)
	bob2 := mustTokenMade(t, tokenEnv(a, ft.operator), "token", "rotate", "bob", "--server")
	refusedBy(t, bob, "a token rotated through a", a, b)
	acceptedBy(t, bob2, []string{"read", "grant"}, "the rotated token", a, b)
	if code, _, errOut := runMainWith(t, nil, "token", "revoke", "bob", "--store", "neo4j"); code != 0 {
		t.Fatalf("revoke offline: exit %d %s", code, errOut)
	}
	refusedBy(t, bob2, "a token revoked offline", a, b)

	l := tokenList(t, tokenEnv(b, ft.operator), "--server")
	if l["alice"].Status != "revoked" || l["bob"].Status != "revoked" {
		t.Fatalf("listed through b: %+v", l)
	}
	eventuallyTrue(t, "the operator token's last use written", func() bool {
		return tokenList(t, tokenEnv(b, ft.operator), "--server")["operator"].LastUsed != ""
	})
	for _, s := range []*server{a, b} {
		mustNoTokenIn(t, "the log", s.logs.String(), alice, bob, bob2, ft.operator, ft.agent)
	}
}

// TestTokensFileImportedAtStart: a tokens file is imported into the store
// at start (audited, actor tokens-file); a token revoked in the store stays
// revoked when serve starts again with the same file (a warning names its
// holder), and a holder added to the file later is imported then.
func TestTokensFileImportedAtStart(t *testing.T) {
	dir := t.TempDir()
	data, file := filepath.Join(dir, "p.db"), filepath.Join(dir, "team.json")
	admin := mustCreateToken(t, file, "admin", "read,admin")
	ci := mustCreateToken(t, file, "ci", "read")
	s := mustServe(t, serverOpts{Data: data, TokensFile: file})
	acceptedBy(t, ci, []string{"read"}, "a token of the tokens file", s)
	if code, _, errOut := runMainWith(t, tokenEnv(s, admin), "token", "revoke", "ci", "--server"); code != 0 {
		t.Fatalf("revoke ci: exit %d %s", code, errOut)
	}
	refusedBy(t, ci, "a revoked token of the tokens file", s)
	s.Stop(t)

	late := mustCreateToken(t, file, "late", "read")
	again := mustServe(t, serverOpts{Data: data, TokensFile: file})
	if st, _ := whoami(t, again, ci); st != 401 {
		t.Fatalf("a token revoked in the store came back from the tokens file: %d", st)
	}
	if !strings.Contains(again.logs.String(), `"holders":["ci"]`) {
		t.Fatalf("no warning names ci:\n%s", again.logs.String())
	}
	acceptedBy(t, late, []string{"read"}, "a holder added to the tokens file", again)
	r := again.send(t, req{Method: "GET", Path: "/v1/decisions?kind=token", Token: &admin})
	if !strings.Contains(string(r.Body), `"actor":"tokens-file"`) || !strings.Contains(string(r.Body), `"reason":"token_imported"`) {
		t.Fatalf("the import is not audited:\n%s", r.Body)
	}
}
