package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tests of docs/design.md "Secure by default": serve's first tokens, the CLI
// finding the operator's on the same machine, where the tokens file is,
// and --auth off.

// firstTokens are the tokens a first serve created in its store, kept in
// credential files beside its data file.
type firstTokens struct {
	operator, agent string // the tokens themselves, from their credential files
}

// mustFirstTokens reads what a first start left next to data: the two
// 0600 credential files, each holding a token; the store holds their
// hashes (docs/design.md "Tokens in the store"), so no tokens file is
// written.
func mustFirstTokens(tb testing.TB, data string) firstTokens {
	tb.Helper()
	dir := filepath.Dir(data)
	var ft firstTokens
	for _, h := range []struct {
		name string
		into *string
	}{{"operator", &ft.operator}, {"agent", &ft.agent}} {
		cred := filepath.Join(dir, "procgraph-"+h.name+".token")
		mustMode600(tb, cred)
		raw, err := os.ReadFile(cred)
		if err != nil {
			tb.Fatal(err)
		}
		*h.into = strings.TrimSpace(string(raw))
		if !strings.HasPrefix(*h.into, "pgt_") {
			tb.Fatalf("%s holds %q, not a token", cred, raw)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "procgraph-tokens.json")); err == nil {
		tb.Fatal("a first start wrote a tokens file: the tokens are the store's")
	}
	return ft
}

func mustMode600(tb testing.TB, path string) {
	tb.Helper()
	st, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		tb.Fatalf("%s has mode %v, want 0600", path, st.Mode().Perm())
	}
}

// mustNotLogTokens fails when the server's JSON log holds a token.
func mustNotLogTokens(tb testing.TB, s *server, tokens ...string) {
	tb.Helper()
	for _, tok := range tokens {
		if strings.Contains(s.logs.String(), tok) {
			tb.Fatalf("the log holds a token:\n%s", s.logs.String())
		}
	}
}

// mustServeFirstTokens serves o with serve's default auth and returns the
// server and the tokens its first start created, the server's default
// token being the operator's.
func mustServeFirstTokens(tb testing.TB, o serverOpts) (*server, firstTokens) {
	tb.Helper()
	tb.Chdir(tb.TempDir()) // a tokens file resolved against the working directory lands there
	if o.Data == "" {
		o.Data = filepath.Join(tb.TempDir(), "p.db")
	}
	o.DefaultAuth = true
	s := mustServe(tb, o)
	ft := mustFirstTokens(tb, o.Data)
	s.token = ft.operator
	return s, ft
}

// TestFirstStartCreatesTokens: serve with no tokens file and no --auth
// creates an operator and an agent token in the store, hashed, each kept
// in a 0600 file next to the data file; auth is on; the agent holds read,
// capture and invoke only; what was created is logged (never a token); a
// second start creates none.
func TestFirstStartCreatesTokens(t *testing.T) {
	t.Chdir(t.TempDir()) // a tokens file resolved against the working directory lands there
	data := filepath.Join(t.TempDir(), "p.db")
	s := mustServe(t, serverOpts{Data: data, DefaultAuth: true})
	ft := mustFirstTokens(t, data)
	mustError(t, s.get(t, "/v1/procedures"), 401, "unauthorized")
	for _, tc := range []struct {
		token string
		want  []any
	}{
		{ft.operator, []any{"read", "capture", "invoke", "grant", "admin"}},
		{ft.agent, []any{"read", "capture", "invoke"}},
	} {
		me := mustStatus(t, s.send(t, req{Method: "GET", Path: "/v1/whoami", Token: &tc.token}), 200)
		if !slices.Equal(me["scopes"].([]any), tc.want) {
			t.Fatalf("whoami %v, want scopes %v", me, tc.want)
		}
	}
	if !strings.Contains(s.logs.String(), `"created":true,"tokens":2`) {
		t.Fatalf("the log does not say the first tokens were created:\n%s", s.logs.String())
	}
	mustNotLogTokens(t, s, ft.operator, ft.agent)
	said := s.terminal.String()
	for _, w := range []string{"created two tokens in the store", filepath.Join(filepath.Dir(data), "procgraph-operator.token"), filepath.Join(filepath.Dir(data), "procgraph-agent.token"), s.URL + "/ui/", s.URL + "/mcp"} {
		if !strings.Contains(said, w) {
			t.Fatalf("serve does not tell the person %q:\n%s", w, said)
		}
	}
	if strings.Contains(said, ft.operator) || strings.Contains(said, ft.agent) {
		t.Fatalf("serve wrote a token to output that is not a terminal:\n%s", said)
	}
	before, _ := os.ReadFile(filepath.Join(filepath.Dir(data), "procgraph-agent.token"))
	s.Stop(t)

	again := mustServe(t, serverOpts{Data: data, DefaultAuth: true})
	if after, _ := os.ReadFile(filepath.Join(filepath.Dir(data), "procgraph-agent.token")); !bytes.Equal(before, after) {
		t.Fatal("a second start rewrote the agent's token")
	}
	if !strings.Contains(again.logs.String(), `"created":false`) {
		t.Fatalf("second start: %s", again.logs.String())
	}
	mustStatus(t, again.send(t, req{Method: "GET", Path: "/v1/whoami", Token: &ft.agent}), 200)
}

// TestConsoleURLCarriesTheToken: on a terminal, serve prints the console's
// URL with the operator token in its fragment (never sent by a browser);
// the log never holds it.
func TestConsoleURLCarriesTheToken(t *testing.T) {
	t.Chdir(t.TempDir()) // a tokens file resolved against the working directory lands there
	data := filepath.Join(t.TempDir(), "p.db")
	cfg, err := parseServeConfig(serverOpts{Data: data, DefaultAuth: true, NoCatalogue: true}.args(t)[1:])
	if err != nil {
		t.Fatal(err)
	}
	logs, terminal := &logSink{}, &logSink{}
	m := NewMain(cfg, newLogger(logs, cfg.LogLevel))
	m.Terminal, m.TerminalIsTTY = terminal, true
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	ft := mustFirstTokens(t, data)
	if want := m.URL() + "/ui/#token=" + ft.operator + "\n"; !strings.Contains(terminal.String(), want) {
		t.Fatalf("no console URL %q:\n%s", want, terminal.String())
	}
	if strings.Contains(terminal.String(), ft.agent) || strings.Contains(logs.String(), ft.operator) {
		t.Fatalf("a token where it does not belong:\n%s\n%s", terminal.String(), logs.String())
	}
}

// cliProcess runs the procgraph CLI as a real process (this test binary
// as procgraph) with env added to the test's environment.
func cliProcess(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(append(os.Environ(), runMainEnv+"=1"), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errOut.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errOut.String()
}

// TestCLIFindsTheOperatorToken: the CLI on the same machine, a separate
// process given no token, finds the operator token serve created and can
// grant; PROCGRAPH_TOKEN wins (the agent's cannot grant); a credential
// file others may read is not used; once serve stops, nothing is found.
func TestCLIFindsTheOperatorToken(t *testing.T) {
	t.Chdir(t.TempDir()) // a tokens file resolved against the working directory lands there
	data := filepath.Join(t.TempDir(), "p.db")
	s := mustServe(t, serverOpts{Data: data, DefaultAuth: true})
	ft := mustFirstTokens(t, data)
	s.token = ft.agent
	name := mustCaptureName(t, s, readOnlyCode, "cli")
	at := "PROCGRAPH_URL=" + s.URL

	code, out, errOut := cliProcess(t, []string{at}, "autorun", "grant", name, "--reason", "reviewed", "--json")
	if code != 0 {
		t.Fatalf("autorun grant with no token given: exit %d\n%s%s", code, out, errOut)
	}
	if d := mustDecision(t, out); d["actor"] != "operator" {
		t.Fatalf("granted as %v, want operator", d["actor"])
	}
	code, _, errOut = cliProcess(t, []string{at, "PROCGRAPH_TOKEN=" + ft.agent}, "autorun", "revoke", name)
	if code != 1 || !strings.Contains(errOut, "forbidden") || !strings.Contains(errOut, "grant") {
		t.Fatalf("the agent token revoked: exit %d %s", code, errOut)
	}

	cred := filepath.Join(filepath.Dir(data), "procgraph-operator.token")
	if err := os.Chmod(cred, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = cliProcess(t, []string{at}, "procedures", "list")
	if code != 1 || !strings.Contains(errOut, "unauthorized") || !strings.Contains(errOut, "readable by others") {
		t.Fatalf("a world-readable credential: exit %d %s", code, errOut)
	}
	if err := os.Chmod(cred, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut = cliProcess(t, []string{at}, "procedures", "list"); code != 0 {
		t.Fatalf("procedures list: exit %d %s", code, errOut)
	}
	s.Stop(t)
	if tok, _, why := findCredential(s.URL); tok != "" || why != nil {
		t.Fatalf("a stopped serve's credential is still found: %q %v", tok, why)
	}

	// The entry of a serve that died without removing it is not used.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dir, err := credentialsDir()
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(strings.TrimPrefix(s.URL, "http://"), ":")
	entry, _ := json.Marshal(credentialEntry{URL: s.URL, TokenFile: cred, PID: gone.Process.Pid})
	if err := os.WriteFile(filepath.Join(dir, credentialKey(host, port)+".json"), entry, 0o600); err != nil {
		t.Fatal(err)
	}
	if tok, _, why := findCredential(s.URL); tok != "" || why == nil || !strings.Contains(why.Error(), "no longer runs") {
		t.Fatalf("a dead serve's entry: %q %v", tok, why)
	}
}

// mustDecision is the decision of an autorun grant's JSON answer.
func mustDecision(tb testing.TB, out string) map[string]any {
	tb.Helper()
	var ans map[string]any
	if err := json.Unmarshal([]byte(out), &ans); err != nil {
		tb.Fatalf("answer %q: %v", out, err)
	}
	d, _ := ans["decision"].(map[string]any)
	if d == nil {
		tb.Fatalf("no decision in %s", out)
	}
	return d
}

// TestTokensFileResolvedAgainstTheData: a relative --tokens-file, and the
// default one, are the data file's neighbours whatever directory serve
// starts in: a store served with tokens is never served with another
// tokens file (or none) because serve started elsewhere. A tokens file in
// the working directory that is not in effect is warned about.
func TestTokensFileResolvedAgainstTheData(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "p.db")
	tokens := filepath.Join(dir, "mine.json")
	op := mustCreateToken(t, tokens, "op", "read")

	elsewhere := t.TempDir()
	t.Chdir(elsewhere)
	mustCreateToken(t, filepath.Join(elsewhere, "mine.json"), "stranger", "read")
	s := mustServe(t, serverOpts{Data: data, TokensFile: "mine.json"})
	if !strings.Contains(s.logs.String(), `"tokens_file":"`+tokens+`"`) {
		t.Fatalf("the log does not name %s:\n%s", tokens, s.logs.String())
	}
	s.token = op
	mustStatus(t, s.get(t, "/v1/procedures"), 200)
	s.Stop(t)

	// The store keeps op's token (imported): served from elsewhere with
	// the default auth, it is op's, not a stranger's file in the working
	// directory.
	t.Chdir(t.TempDir())
	stranger := mustCreateToken(t, filepath.Join(".", "procgraph-tokens.json"), "stranger", "read")
	again := mustServe(t, serverOpts{Data: data, DefaultAuth: true})
	mustError(t, again.get(t, "/v1/procedures"), 401, "unauthorized")
	again.token = stranger
	mustError(t, again.get(t, "/v1/procedures"), 401, "unauthorized")
	again.token = op
	mustStatus(t, again.get(t, "/v1/procedures"), 200)
	if !strings.Contains(again.logs.String(), `"created":false`) ||
		!strings.Contains(again.logs.String(), "a tokens file in the working directory is not used") {
		t.Fatalf("served from another directory:\n%s", again.logs.String())
	}
}

// TestAuthOffIsLoud: --auth off (or PROCGRAPH_AUTH=off) serves without
// tokens on loopback with a warning in the log and to the person at every
// start, names the tokens file next to the data file it does not use, and
// creates no token. (Non-loopback refusals:
// TestRefuseToStart.)
func TestAuthOffIsLoud(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts serverOpts
		env  string
	}{
		{"flag", serverOpts{}, ""},
		{"env", serverOpts{DefaultAuth: true}, "off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("PROCGRAPH_AUTH", tc.env)
			}
			data := filepath.Join(t.TempDir(), "p.db")
			tokens := filepath.Join(filepath.Dir(data), "procgraph-tokens.json")
			mustCreateToken(t, tokens, "ops", "read")
			tc.opts.Data = data
			s := mustServe(t, tc.opts)
			if !strings.Contains(s.logs.String(), `"ignored":"`+tokens+`"`) {
				t.Fatalf("the tokens file next to the data file is ignored without a word:\n%s", s.logs.String())
			}
			if !strings.Contains(s.logs.String(), `"setting":"--auth off / PROCGRAPH_AUTH=off"`) || !strings.Contains(s.logs.String(), `"level":"warn"`) ||
				!strings.Contains(s.terminal.String(), "WARNING: auth is off") {
				t.Fatalf("no warning:\n%s\n%s", s.logs.String(), s.terminal.String())
			}
			mustStatus(t, s.get(t, "/v1/procedures"), 200)
			for _, f := range []string{"procgraph-operator.token", "procgraph-agent.token"} {
				if _, err := os.Stat(filepath.Join(filepath.Dir(data), f)); err == nil {
					t.Fatalf("--auth off created %s", f)
				}
			}
		})
	}
}

// mustNotSelfGrantOverMCP checks, for an MCP client holding token ("":
// none) on both endpoints, that it cannot grant itself: calling
// set_procedure_auto_run fails, a state-changing block run with run_code
// is not offered to it for review (elicitation) but waits for an operator,
// and a state-changing proc__ call is not its own reviewer. Nothing
// reaches the upstream, and no grant is recorded.
func mustNotSelfGrantOverMCP(t *testing.T, s *server, up *upstream, token, name string) {
	t.Helper()
	elicited := make(chan struct{}, 4)
	opts := &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		elicited <- struct{}{}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"choice": "auto_run", "reason": "me"}}, nil
	}}
	up.reset()
	for _, path := range []string{"/mcp", "/mcp/interactive"} {
		sess := mustMCPAs(t, s, path, token, opts)
		res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "set_procedure_auto_run",
			Arguments: map[string]any{"name": name, "enabled": true, "reason": "me"}})
		if err == nil && !res.IsError {
			t.Fatalf("%s: set_procedure_auto_run granted: %s", path, mcpText(res))
		}
		if path != "/mcp/interactive" {
			continue
		}
		res = callRunCode(t, sess, map[string]any{"code": turnKillCode, "arguments": map[string]any{"panda_id": 9}, "session_id": "self"})
		if res.IsError || !strings.Contains(mcpText(res), "pending") {
			t.Fatalf("run_code: %s", mcpText(res))
		}
		res, err = sess.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"task_id": 1}})
		if err != nil || !res.IsError || !strings.Contains(mcpText(res), "review_required") {
			t.Fatalf("a state-changing proc__ call: %v %s", err, mcpText(res))
		}
	}
	if len(elicited) > 0 {
		t.Fatal("the client was asked to review its own turn")
	}
	up.mustSeeNothing(t, "an MCP client's attempts to grant itself")
	if ds := s.decisions(t, "kind=grant"); len(ds) != 0 {
		t.Fatalf("grant decisions %v", ds)
	}
	if ds := s.decisions(t, "kind=approval"); len(ds) != 0 {
		t.Fatalf("approval decisions %v", ds)
	}
}

// TestMCPWithoutAuthOffersNoGrant: with --auth off neither MCP endpoint
// lists a grant-scoped tool, and an MCP client cannot grant itself by any
// path (the quickstart agent that granted itself durable auto-run as
// anonymous).
func TestMCPWithoutAuthOffersNoGrant(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up, AllowMutating: true})
	name := mustCaptureName(t, s, "a = tools.get_task_jobs_summary(task_id=task_id)\ntools.retry_task(task_id=task_id)\nreturn a\n", "m")
	for _, path := range []string{"/mcp", "/mcp/interactive"} {
		tools := mcpToolNames(t, mustMCPAs(t, s, path, "", nil))
		if tools[name] == nil {
			t.Fatalf("%s does not list %s: %v", path, name, tools)
		}
		if tools["set_procedure_auto_run"] != nil {
			t.Fatalf("%s lists set_procedure_auto_run without auth", path)
		}
	}
	mustNotSelfGrantOverMCP(t, s, up, "", name)
}

// TestAgentTokenCannotGrant: the first start's agent token captures,
// invokes and submits turns, but grants nothing over HTTP or MCP; the
// operator's can.
func TestAgentTokenCannotGrant(t *testing.T) {
	up := mustUpstream(t)
	s, ft := mustServeFirstTokens(t, serverOpts{Upstream: up, AllowMutating: true})
	s.token = ft.agent
	name := mustCaptureName(t, s, "a = tools.get_task_jobs_summary(task_id=task_id)\ntools.retry_task(task_id=task_id)\nreturn a\n", "m")
	mustError(t, s.send(t, req{Method: "PUT", Path: "/v1/procedures/" + name + "/auto-run", Body: map[string]any{"enabled": true, "reason": "me"}}), 403, "forbidden")
	turn := mustStatus(t, s.post(t, "/v1/turns", killTurn("agent", 1)), 202)["turn"].(map[string]any)["id"].(string)
	mustError(t, s.post(t, "/v1/approvals/"+turn+"/resolve", map[string]any{"choice": "auto_run"}), 403, "forbidden")
	mustNotSelfGrantOverMCP(t, s, up, ft.agent, name)
	s.token = ft.operator
	mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/procedures/" + name + "/auto-run", Body: map[string]any{"enabled": true, "reason": "reviewed"}}), 200)
}

// TestConsoleTokenFromURL: the console URL serve prints on a terminal
// (/ui/#token=…, the operator token in the fragment) opens the console
// signed in: the token is kept for the tab, the fragment is replaced at
// once (not in the address bar or the tab's history), and no request the
// browser sends carries the token but as its bearer header — not in a
// URL, not in a Referer — so the server never sees it elsewhere.
func TestConsoleTokenFromURL(t *testing.T) {
	tab := mustBrowser(t)
	s, ft := mustServeFirstTokens(t, serverOpts{})
	names := mustCaptureExamples(t, s, "input dataset unavailable")
	var mu sync.Mutex
	var leaks []string
	bearers := 0 // requests seen with the token as their bearer: the listener listens
	chromedp.ListenTarget(tab.ctx, func(ev any) {
		if ev, ok := ev.(*network.EventRequestWillBeSent); ok {
			for k, v := range ev.Request.Headers {
				if fmt.Sprint(v) == "Bearer "+ft.operator && strings.EqualFold(k, "Authorization") {
					mu.Lock()
					bearers++
					mu.Unlock()
					continue
				}
				if strings.Contains(fmt.Sprint(v), ft.operator) {
					mu.Lock()
					leaks = append(leaks, k+" of "+ev.Request.URL)
					mu.Unlock()
				}
			}
			if strings.Contains(ev.Request.URL, ft.operator) && ev.Type != network.ResourceTypeDocument {
				mu.Lock()
				leaks = append(leaks, "the URL "+ev.Request.URL)
				mu.Unlock()
			}
		}
	})
	tab.run(t, chromedp.Navigate(s.URL+"/ui/#token="+ft.operator))
	tab.waitJS(t, `document.querySelectorAll('#procedures tbody tr').length > 0`)
	if n := tab.count(t, "#procedures tbody tr"); n != len(names) {
		t.Fatalf("%d rows, want %d", n, len(names))
	}
	var state struct {
		Href, Stored string
		Who          string
	}
	tab.eval(t, `({href: location.href, stored: sessionStorage.getItem('procgraph.token'), who: document.getElementById('auth').textContent})`, &state)
	if state.Stored != ft.operator || strings.Contains(state.Href, ft.operator) || !strings.HasSuffix(state.Href, "/ui/#/procedures") {
		t.Fatalf("after opening the console URL: %+v", state)
	}
	tab.open(t, s.URL, "#/procedure/"+names[0])
	if tab.count(t, "#grant") != 1 {
		t.Fatal("the operator token's grant actions are not shown")
	}
	tab.run(t, chromedp.NavigateBack())
	tab.eval(t, `location.href`, &state.Href)
	if strings.Contains(state.Href, ft.operator) {
		t.Fatalf("the tab's history keeps the token: %s", state.Href)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(leaks) > 0 || bearers == 0 {
		t.Fatalf("the token left the browser elsewhere than its bearer header (%d bearer requests): %v", bearers, leaks)
	}
	mustNotLogTokens(t, s, ft.operator)
	tab.mustClean(t, "token from the URL")
}
