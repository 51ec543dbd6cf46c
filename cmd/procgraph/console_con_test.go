package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestConsoleGrantOnlyWhereGrantable: the procedure page offers "Grant
// auto-run" only where the API's auto_run.grantable says a grant would be
// accepted, says why elsewhere (a state-changing procedure while mutating
// auto-run is off), and a grant refused after the page was drawn (the
// catalogue changed the procedure's class meanwhile) is named in a
// readable notice.
func TestConsoleGrantOnlyWhereGrantable(t *testing.T) {
	tab := mustBrowser(t)
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up})
	mustCaptureName(t, s, readOnlyCode, "console")
	mustCaptureName(t, s, killCode, "console")

	tab.open(t, s.URL, "#/procedure/"+killName)
	if n := tab.count(t, "#grant"); n != 0 {
		t.Fatalf("Grant auto-run is offered on a state-changing procedure with mutating auto-run off (%d buttons)", n)
	}
	if got := tab.text(t, "#not-grantable"); !strings.Contains(got, "changes state") || !strings.Contains(got, "mutating auto-run off") {
		t.Fatalf("the page does not say why it cannot be granted: %q", got)
	}
	tab.screenshot(t, "con-not-grantable")

	tab.open(t, s.URL, "#/procedure/"+readOnlyName)
	if tab.count(t, "#grant") != 1 || tab.count(t, "#not-grantable") != 0 {
		t.Fatal("a read-only procedure is not offered a grant")
	}
	// The catalogue makes one of its tools state-changing: the grant asked
	// for from the page drawn before is refused, and the notice says why.
	var cat struct {
		Tools []map[string]any `json:"tools"`
	}
	s.get(t, "/v1/tools").Into(t, &cat)
	for _, tool := range cat.Tools {
		if tool["name"] == "get_retry_chain" {
			tool["read_only"] = false
		}
		delete(tool, "schema_hash")
	}
	mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/tools", Body: map[string]any{"tools": cat.Tools}}), 200)
	tab.run(t, chromedp.SetValue("#grant-reason", "reviewed", chromedp.ByQuery), chromedp.Click("#grant", chromedp.ByQuery))
	tab.waitJS(t, `document.getElementById('notice') && document.getElementById('notice').dataset.kind === 'error'`)
	got := tab.text(t, "#notice")
	if want := "Auto-run was not granted for " + readOnlyName + ": auto-run cannot be granted: the procedure changes state and mutating auto-run is off"; got != want {
		t.Fatalf("notice %q, want %q", got, want)
	}
	tab.screenshot(t, "con-grant-refused")
	tab.mustClean(t, "grant gating")
}

// TestConsoleDeepLinkToken: a deep link carrying the token in its fragment
// (#/approvals&token=…, #/audit?kind=turn&token=…) opens that page signed
// in; the token is kept for the tab and stripped from the address bar and
// the tab's history at once, the page's own query kept.
func TestConsoleDeepLinkToken(t *testing.T) {
	tab := mustBrowser(t)
	s, ft := mustServeFirstTokens(t, serverOpts{})
	for _, c := range []struct{ link, page, route string }{
		{"#/approvals&token=" + ft.operator, "approvals", "#/approvals"},
		{"#/audit?kind=turn&token=" + ft.operator, "audit", "#/audit?kind=turn"},
		{"#/audit?token=" + ft.operator + "&kind=grant", "audit", "#/audit?kind=grant"},
	} {
		tab.run(t, chromedp.Navigate("about:blank"))
		tab.run(t, chromedp.Navigate(s.URL+"/ui/"+c.link))
		tab.waitReady(t)
		var st struct {
			Href, Stored, Page, Auth string
		}
		tab.eval(t, `({href: location.href, stored: sessionStorage.getItem('procgraph.token'), page: document.getElementById('view').dataset.page, auth: document.getElementById('auth').textContent})`, &st)
		if strings.Contains(st.Href, ft.operator) || !strings.HasSuffix(st.Href, "/ui/"+c.route) {
			t.Fatalf("%s: the address bar is %s, want …/ui/%s without the token", c.route, st.Href, c.route)
		}
		if st.Stored != ft.operator || st.Page != c.page || !strings.Contains(st.Auth, "token set") {
			t.Fatalf("%s: %+v", c.route, st)
		}
		if c.page == "audit" && tab.count(t, "#view .error") != 0 {
			t.Fatalf("%s: the page shows an error: %s", c.route, tab.text(t, "#view .error"))
		}
		tab.run(t, chromedp.Evaluate(`location.hash = '#/catalogue'; true`, nil))
		tab.waitJS(t, `document.getElementById('view').dataset.rendered === '#/catalogue'`)
		tab.run(t, chromedp.NavigateBack())
		var back string
		tab.eval(t, `location.href`, &back)
		if strings.Contains(back, ft.operator) || !strings.HasSuffix(back, c.route) {
			t.Fatalf("the tab's history holds %s, want …%s without the token", back, c.route)
		}
		tab.run(t, chromedp.Evaluate(`sessionStorage.clear(); true`, nil))
	}
	// Followed from inside the console (a link pasted into the same tab).
	tab.open(t, s.URL, "#/procedures")
	tab.run(t, chromedp.Evaluate(`location.hash = '#/approvals&token=`+ft.operator+`'; true`, nil))
	tab.waitJS(t, `location.hash === '#/approvals' && document.getElementById('view').dataset.rendered === '#/approvals' && document.getElementById('view').dataset.ready === 'true'`)
	var stored string
	tab.eval(t, `sessionStorage.getItem('procgraph.token')`, &stored)
	if stored != ft.operator {
		t.Fatal("a deep link followed in the tab does not keep its token")
	}
	tab.screenshot(t, "con-deep-link")
	mustNotLogTokens(t, s, ft.operator)
	tab.mustClean(t, "deep link token")
}

// TestConsoleHealthOverview: the health page lists, from the procedures'
// health as the API gives it, the demoted procedures, those whose last
// run failed, the failures by class and the slowest.
func TestConsoleHealthOverview(t *testing.T) {
	tab := mustBrowser(t)
	up := mustUpstream(t)
	// Two agents: a demotion needs two callers' failures (docs/design.md
	// "Health of each version").
	tokens := filepath.Join(t.TempDir(), "tokens.json")
	agentA, agentB := mustCreateToken(t, tokens, "agent-a", "read,invoke,capture"), mustCreateToken(t, tokens, "agent-b", "read,invoke")
	op := mustCreateToken(t, tokens, "op", "read,grant")
	s := mustServe(t, serverOpts{Upstream: up, TokensFile: tokens})
	s.token = agentA
	slow := mustCaptureName(t, s, readOnlyCode, "health")
	demoted := mustCaptureName(t, s, "a = tools.get_task_jobs_summary(task_id=task_id)\nreturn [a, tools.search_panda_docs(query=q)]", "health")
	failing := mustCaptureName(t, s, "d = tools.search_panda_docs(query=q)\nreturn [d, tools.get_retry_chain(task_id=task_id)]", "health")
	never := mustCaptureName(t, s, killCode, "health")
	args := map[string]any{"arguments": map[string]any{"task_id": 1, "q": "logs"}, "phase": "automatic"}
	up.setDelay("get_retry_chain", 300*time.Millisecond)
	mustStatus(t, s.invoke(t, slow, map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "automatic"}), 200)
	up.setDelay("get_retry_chain", 0)
	mustStatus(t, s.invoke(t, failing, args), 200)
	up.mu.Lock()
	up.fail["search_panda_docs"] = "down"
	up.mu.Unlock()
	for _, agent := range []string{agentA, agentB, agentA} {
		s.token = agent
		s.invoke(t, demoted, args)
	}
	s.invoke(t, failing, args)

	tab.open(t, s.URL, "#/causes")
	var ignored any
	tab.eval(t, `sessionStorage.setItem('procgraph.token', `+jsString(op)+`)`, &ignored)
	tab.open(t, s.URL, "#/health")
	summary := tab.text(t, "#health-summary")
	for _, want := range []string{"4 procedures", "1 demoted", "1 failing", "1 healthy", "1 never run"} {
		if !strings.Contains(summary, want) {
			t.Fatalf("summary %q lacks %q", summary, want)
		}
	}
	if got := tab.text(t, "#health-demoted"); !strings.Contains(got, demoted) || !strings.Contains(got, "tool_error") || strings.Contains(got, failing) {
		t.Fatalf("demoted:\n%s", got)
	}
	if got := tab.text(t, "#health-failing"); !strings.Contains(got, failing) || strings.Contains(got, demoted) || strings.Contains(got, slow) {
		t.Fatalf("failing:\n%s", got)
	}
	if got := tab.text(t, "#health-classes tbody"); !strings.Contains(got, "tool_error\t4\t2") {
		t.Fatalf("by class:\n%q", got)
	}
	var first string
	tab.eval(t, `document.querySelector('#health-slowest tbody tr td').innerText`, &first)
	if strings.ReplaceAll(first, "\u200b", "") != slow || strings.Contains(tab.text(t, "#health-slowest"), never) {
		t.Fatalf("slowest first %q, want %s:\n%s", first, slow, tab.text(t, "#health-slowest"))
	}
	tab.screenshot(t, "con-health-overview")
	tab.mustClean(t, "health overview")
}

// TestConsoleDriftSchemaDiff: the drift page and the procedure page show
// what changed in a tool's input schema (the member, was → now), not only
// that it changed.
func TestConsoleDriftSchemaDiff(t *testing.T) {
	tab := mustBrowser(t)
	s := mustServe(t, serverOpts{})
	s.mustCapture(t, map[string]any{"code": readOnlyCode, "session_id": "d"}, nil)
	var cat map[string]any
	s.get(t, "/v1/tools").Into(t, &cat)
	for _, tl := range cat["tools"].([]any) {
		if m := tl.(map[string]any); m["name"] == "get_retry_chain" {
			m["input_schema"] = map[string]any{"type": "object", "properties": map[string]any{"task_id": map[string]any{"type": "string"}, "verbose": map[string]any{"type": "boolean"}}}
			delete(m, "schema_hash")
		}
	}
	mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/tools", Body: map[string]any{"tools": cat["tools"]}}), 200)
	tab.open(t, s.URL, "#/drift")
	got := tab.text(t, "#drift tbody")
	for _, want := range []string{"get_retry_chain: input_schema", `/properties/task_id/type: "integer" → "string"`, `/properties/verbose added: {"type":"boolean"}`} {
		if !strings.Contains(got, want) {
			t.Fatalf("the drift page lacks %q:\n%s", want, got)
		}
	}
	tab.screenshot(t, "con-drift-diff")
	tab.open(t, s.URL, "#/procedure/"+readOnlyName)
	if got := tab.text(t, "#drift"); !strings.Contains(got, `/properties/task_id/type: "integer" → "string"`) {
		t.Fatalf("the procedure page's drift: %q", got)
	}
	tab.mustClean(t, "drift diff")
}
