package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// demotionFixture is a served Main with tokens: two agents (read,
// invoke), an operator with admin and one without, and the examples'
// read-only procedure captured.
type demotionFixture struct {
	s                             *server
	name                          string
	agentA, agentB, root, granter string
}

func mustDemotionFixture(t *testing.T, up *upstream, upstreamURL string, extra ...string) *demotionFixture {
	t.Helper()
	tokens := filepath.Join(t.TempDir(), "tokens.json")
	f := &demotionFixture{
		agentA:  mustCreateToken(t, tokens, "agent-a", "read,invoke"),
		agentB:  mustCreateToken(t, tokens, "agent-b", "read,invoke"),
		root:    mustCreateToken(t, tokens, "root", "read,capture,invoke,grant,admin"),
		granter: mustCreateToken(t, tokens, "granter", "read,capture,invoke,grant"),
	}
	if upstreamURL != "" {
		extra = append(extra, "--upstream-http", upstreamURL)
	}
	f.s = mustServe(t, serverOpts{Upstream: up, TokensFile: tokens, Extra: extra})
	f.s.token = f.root
	f.name = mustCaptureName(t, f.s, readOnlyCode, "d1")
	return f
}

// invokeAs invokes the procedure as token in phase with task_id, and
// returns the answer's status and body.
func (f *demotionFixture) invokeAs(t *testing.T, token, phase string, taskID int) (int, map[string]any) {
	t.Helper()
	r := f.s.send(t, req{Method: "POST", Path: "/v1/procedures/" + f.name + "/invoke", Token: &token,
		Body: map[string]any{"arguments": map[string]any{"task_id": taskID}, "phase": phase}})
	var body map[string]any
	r.Into(t, &body)
	return r.Status, body
}

// mustRun requires an invoke as token that ran with the result want
// (a run's decision result: succeeded, or its failure class).
func (f *demotionFixture) mustRun(t *testing.T, token, phase string, taskID int, want string) {
	t.Helper()
	status, body := f.invokeAs(t, token, phase, taskID)
	d, _ := body["decision"].(map[string]any)
	if status != 200 || d["result"] != want {
		t.Fatalf("an invoke (%s) with task_id %d: %d %v; want it run, result %s", phase, taskID, status, body, want)
	}
}

// state is the procedure as GET /v1/procedures/{name} answers it.
func (f *demotionFixture) state(t *testing.T) map[string]any {
	t.Helper()
	return mustStatus(t, f.s.get(t, "/v1/procedures/"+f.name), 200)
}

// mustOffered requires the procedure offered and runnable unattended: not
// demoted, exposed, in an agent's MCP tools, and an automatic invoke of
// it runs and succeeds.
func (f *demotionFixture) mustOffered(t *testing.T, up *upstream, when string) {
	t.Helper()
	if p := f.state(t); p["demoted"] != false || p["exposed"] != true {
		t.Fatalf("%s: demoted %v, exposed %v; want it offered", when, p["demoted"], p["exposed"])
	}
	if mcpToolNames(t, mustMCPClientAs(t, f.s, "/mcp", f.agentB))[f.name] == nil {
		t.Fatalf("%s: /mcp does not list %s", when, f.name)
	}
	up.reset()
	f.mustRun(t, f.agentB, "automatic", 1, "succeeded")
	if len(up.tools()) != 2 {
		t.Fatalf("%s: the automatic invoke reached %v", when, up.tools())
	}
}

// mustDemoted requires the procedure demoted: not exposed, not in MCP's
// tools, an automatic invoke denied (reason demoted) reaching no tool.
func (f *demotionFixture) mustDemoted(t *testing.T, up *upstream, when string) {
	t.Helper()
	if p := f.state(t); p["demoted"] != true || p["exposed"] != false {
		t.Fatalf("%s: demoted %v, exposed %v; want demoted, hidden", when, p["demoted"], p["exposed"])
	}
	if mcpToolNames(t, mustMCPClientAs(t, f.s, "/mcp", f.agentB))[f.name] != nil {
		t.Fatalf("%s: /mcp still lists the demoted %s", when, f.name)
	}
	up.reset()
	status, body := f.invokeAs(t, f.agentB, "automatic", 1)
	errBody, _ := body["error"].(map[string]any)
	details, _ := errBody["details"].(map[string]any)
	decision, _ := details["decision"].(map[string]any)
	if status != 403 || errBody["code"] != "denied" || decision["reason"] != "demoted" {
		t.Fatalf("%s: an automatic invoke answered %d %v; want 403 denied, reason demoted", when, status, body)
	}
	up.mustSeeNothing(t, when+": an automatic invoke of a demoted procedure")
}

// TestOutageDemotesNothing: issue 33's outage. With the upstream down
// (nothing listens on its port), automatic invokes fail, and with it
// back the next automatic invoke runs: nothing was demoted. A slow server
// (every call past the deadline: timeout) failing for two agents demotes
// nothing either: neither is the procedure's fault, and neither advances
// the demotion streak.
func TestOutageDemotesNothing(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // down: nothing listens there until it comes back
	up := &upstream{fail: map[string]string{}, delay: map[string]time.Duration{}}
	f := mustDemotionFixture(t, nil, "http://"+addr, "--replay-timeout", "2s")
	// Two agents, so that only the class keeps it offered: an outage
	// (upstream_unavailable) neither advances nor ends the streak.
	for _, agent := range []string{f.agentA, f.agentB, f.agentA} {
		status, body := f.invokeAs(t, agent, "automatic", 1)
		if status != 200 || body["status"] != "failed" {
			t.Fatalf("an invoke with the upstream down: %d %v", status, body)
		}
		if e, _ := body["error"].(map[string]any); e == nil || e["code"] != "upstream_unavailable" {
			t.Fatalf("an invoke with the upstream down failed %v, want upstream_unavailable", body["error"])
		}
	}
	if p := f.state(t); p["demoted"] != false || p["exposed"] != true || p["health"].(map[string]any)["demotion_streak"] != float64(0) {
		t.Fatalf("after the outage: demoted %v, exposed %v, health %v; want it still offered, no streak", p["demoted"], p["exposed"], p["health"])
	}

	back, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the upstream's port was taken while it was down: %v", err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(up.handle))
	srv.Listener.Close()
	srv.Listener = back
	srv.Start()
	t.Cleanup(srv.Close)
	up.Server = srv
	f.mustOffered(t, up, "with the upstream back")

	up.setDelay("get_retry_chain", time.Hour) // answers only when the call is given up
	for _, agent := range []string{f.agentA, f.agentB, f.agentA} {
		f.mustRun(t, agent, "automatic", 1, "timeout")
	}
	up.setDelay("get_retry_chain", 0)
	if h := f.state(t)["health"].(map[string]any); h["demotion_streak"] != float64(0) {
		t.Fatalf("timeouts advanced the demotion streak: %v", h)
	}
	f.mustOffered(t, up, "after two agents' timeouts")
}

// TestArgumentsCannotDemote: issue 33's attack. An agent token makes the
// tool fail by its arguments (task_id 666: the tool answers an error)
// again and again, over HTTP and MCP: the procedure stays offered to
// everyone, runs unattended, and its health says one caller ran the
// streak.
func TestArgumentsCannotDemote(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	up.failTask = "666"
	f := mustDemotionFixture(t, up, "")
	for range 4 {
		f.mustRun(t, f.agentA, "automatic", 666, "tool_error")
	}
	sess := mustMCPClientAs(t, f.s, "/mcp", f.agentA)
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: f.name, Arguments: map[string]any{"task_id": 666}})
	if err != nil || !res.IsError {
		t.Fatalf("a proc__ call with task_id 666 did not fail: %+v, %v", res, err)
	}
	h := f.state(t)["health"].(map[string]any)
	if h["demotion_streak"] != float64(5) || h["demotion_callers"] != float64(1) || h["failures"].(map[string]any)["tool_error"] != float64(5) {
		t.Fatalf("health after one agent's five failures: %v", h)
	}
	f.mustOffered(t, up, "after one agent's chosen failures")
}

// TestDemotionHidesAndDenies: a procedure that fails for every caller
// (the tool fails whatever the arguments) is demoted once two agents'
// failures reach --demote-after: it leaves the planner view and MCP's
// tools, an automatic invoke is denied (reason demoted) and reaches no
// tool, an interactive one still runs — and its success lifts nothing. A
// verification against its recordings that passes lifts it (procgraph,
// health_restored); demoted again, an operator lifts it with procgraph
// undemote (admin only, audited with their name and reason).
func TestDemotionHidesAndDenies(t *testing.T) {
	// not parallel: it sets PROCGRAPH_URL and PROCGRAPH_TOKEN for the CLI
	up := mustUpstream(t)
	f := mustDemotionFixture(t, up, "", "--demote-after", "2")
	f.mustRun(t, f.agentA, "automatic", 1, "succeeded") // its recording, for the verification
	plannerTools := func() int {
		var view struct{ Tools []map[string]any }
		r := f.s.get(t, "/v1/procedures/tools")
		mustStatus(t, r, 200)
		r.Into(t, &view)
		return len(view.Tools)
	}
	if plannerTools() != 1 {
		t.Fatal("the procedure is not in the planner view before it failed")
	}
	breakTool := func(broken bool) {
		up.mu.Lock()
		defer up.mu.Unlock()
		delete(up.fail, "get_retry_chain")
		if broken {
			up.fail["get_retry_chain"] = "down"
		}
	}
	breakTool(true)
	f.mustRun(t, f.agentA, "automatic", 1, "tool_error")
	f.mustRun(t, f.agentA, "automatic", 2, "tool_error")
	if p := f.state(t); p["demoted"] != false {
		t.Fatal("one agent's failures demoted the procedure")
	}
	f.mustRun(t, f.agentB, "automatic", 3, "tool_error")
	breakTool(false)
	f.mustDemoted(t, up, "after two agents' failures")
	if n := plannerTools(); n != 0 {
		t.Errorf("the planner view lists %d tools, want the demoted procedure gone", n)
	}
	f.mustRun(t, f.root, "interactive", 1, "succeeded")
	f.mustDemoted(t, up, "after an interactive success")

	t.Setenv("PROCGRAPH_URL", f.s.URL)
	t.Setenv("PROCGRAPH_TOKEN", f.agentA)
	if code, out, errOut := runMain(t, "verify", f.name); code != 0 || !strings.Contains(out, "passed") {
		t.Fatalf("verify: exit %d\n%s%s", code, out, errOut)
	}
	f.mustOffered(t, up, "after a verification passed")
	ds := f.s.decisions(t, "kind=health")
	if len(ds) != 2 || ds[0]["reason"] != "health_restored" || ds[0]["actor"] != "procgraph" || ds[1]["reason"] != "demoted" ||
		ds[1]["actor"] != "procgraph" || !strings.Contains(ds[0]["note"].(string), "verification") {
		t.Fatalf("health decisions = %v; want demoted, then health_restored by the verification, by procgraph", ds)
	}

	breakTool(true)
	f.mustRun(t, f.agentB, "automatic", 4, "tool_error")
	f.mustRun(t, f.agentA, "automatic", 5, "tool_error")
	breakTool(false)
	f.mustDemoted(t, up, "demoted again")
	if code, out, _ := runMain(t, "procedures", "show", f.name); code != 0 || !strings.Contains(out, "demoted") || !strings.Contains(out, "procgraph undemote") {
		t.Fatalf("procedures show of a demoted procedure: exit %d\n%s", code, out)
	}
	t.Setenv("PROCGRAPH_TOKEN", f.granter)
	if code, _, errOut := runMain(t, "undemote", f.name, "--reason", "x"); code != 1 || !strings.Contains(errOut, "403") || !strings.Contains(errOut, "admin") {
		t.Fatalf("undemote without the admin scope: exit %d, %s", code, errOut)
	}
	t.Setenv("PROCGRAPH_TOKEN", f.root)
	var ans struct{ Procedure, Decision map[string]any }
	mustRunJSON(t, &ans, "undemote", f.name, "--reason", "the tool is fixed", "--json")
	if ans.Decision["kind"] != "health" || ans.Decision["reason"] != "health_restored" || ans.Decision["actor"] != "root" ||
		ans.Decision["note"] != "the tool is fixed" || ans.Procedure["demoted"] != false {
		t.Fatalf("undemote answered %+v", ans)
	}
	f.mustOffered(t, up, "after undemote")
	if code, _, errOut := runMain(t, "undemote", f.name); code != 1 || !strings.Contains(errOut, "409") || !strings.Contains(errOut, "not_demoted") {
		t.Fatalf("undemote of a procedure that is not demoted: exit %d, %s", code, errOut)
	}
	if ds := f.s.decisions(t, "kind=health"); len(ds) != 4 {
		t.Fatalf("health decisions = %v; want 4 (a refused undemote records nothing)", ds)
	}
}

// TestConsoleLiftsDemotion: a demoted procedure's page says it is demoted,
// why and what lifts it, and its health shows the demotion streak and
// which failure classes count; a token without the admin scope sees no
// action, an admin's Lift demotion needs a reason and then lifts it
// through the API, audited with their name and reason.
func TestConsoleLiftsDemotion(t *testing.T) {
	t.Parallel()
	tab := mustBrowser(t)
	up := mustUpstream(t)
	f := mustDemotionFixture(t, up, "", "--demote-after", "2", "--replay-timeout", "2s")
	up.setDelay("get_retry_chain", time.Hour)
	f.mustRun(t, f.agentA, "automatic", 1, "timeout")
	up.setDelay("get_retry_chain", 0)
	up.mu.Lock()
	up.fail["get_retry_chain"] = "down"
	up.mu.Unlock()
	f.mustRun(t, f.agentA, "automatic", 1, "tool_error")
	f.mustRun(t, f.agentB, "automatic", 1, "tool_error")
	up.mu.Lock()
	delete(up.fail, "get_retry_chain")
	up.mu.Unlock()
	f.mustDemoted(t, up, "before the console")

	var ignored any
	tab.open(t, f.s.URL, "#/procedures")
	tab.eval(t, `sessionStorage.setItem('procgraph.token', `+jsString(f.granter)+`)`, &ignored)
	tab.open(t, f.s.URL, "#/procedure/"+f.name)
	if got := tab.text(t, "#demotion"); !strings.Contains(got, "Demoted") || !strings.Contains(got, "tool_error") || !strings.Contains(got, "verification") {
		t.Fatalf("the demotion's explanation: %q", got)
	}
	if tab.count(t, "#undemote") != 0 || tab.count(t, "#no-undemote") != 1 {
		t.Fatal("Lift demotion shown to a token without the admin scope")
	}
	health := tab.text(t, "#health")
	if !strings.Contains(health, "demotion streak 2, several callers") || !strings.Contains(health, "timeout ×1 (not counted)") ||
		!strings.Contains(health, "tool_error ×2") || strings.Contains(health, "tool_error ×2 (not counted)") {
		t.Fatalf("the health shown: %q", health)
	}

	tab.eval(t, `sessionStorage.setItem('procgraph.token', `+jsString(f.root)+`)`, &ignored)
	tab.open(t, f.s.URL, "#/procedures") // another page first: the same hash would not render again
	tab.open(t, f.s.URL, "#/procedure/"+f.name)
	tab.run(t, chromedp.Click("#undemote", chromedp.ByQuery))
	tab.waitJS(t, `document.querySelector('#undemote-result .error') !== null`)
	if f.state(t)["demoted"] != true {
		t.Fatal("lifted without a reason")
	}
	tab.run(t, chromedp.SendKeys("#undemote-reason", "upstream fixed", chromedp.ByQuery), chromedp.Click("#undemote", chromedp.ByQuery))
	tab.waitJS(t, `document.querySelector('#demotion') === null && document.querySelector('#proc-name') !== null`)
	if got := tab.text(t, "#notice"); !strings.Contains(got, "Demotion lifted for "+f.name) {
		t.Fatalf("no confirmation of the lifting: %q", got)
	}
	f.mustOffered(t, up, "after the console's lifting")
	if ds := f.s.decisions(t, "kind=health"); len(ds) != 2 || ds[0]["actor"] != "root" || ds[0]["note"] != "upstream fixed" || ds[0]["reason"] != "health_restored" {
		t.Fatalf("health decisions = %v", ds)
	}
	tab.mustClean(t, "demotion")
}
