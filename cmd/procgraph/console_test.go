package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// xssPayloads try to run window.__xss = 1 from every field the console shows.
var xssPayloads = []string{
	`<img src=x onerror="window.__xss=1">`,
	`</script><script>window.__xss=1</script>`,
	`javascript:window.__xss=1`,
	`"><svg onload="window.__xss=1"><a href="javascript:window.__xss=1">x</a>`,
}

var xssText = strings.Join(xssPayloads, " ")

// consoleFixture is a served Main with the examples captured, a second
// version of one of them, a hostile procedure and cause, and a catalogue
// tool with a hostile description.
type consoleFixture struct {
	s        *server
	compare  string // the examples' compare_logs procedure (two versions)
	hostile  string // a procedure whose every field is hostile
	examples []string
}

func mustConsoleFixture(t *testing.T) *consoleFixture {
	t.Helper()
	s := mustServe(t, serverOpts{})
	f := &consoleFixture{s: s}
	f.examples = mustCaptureExamples(t, s, "input dataset unavailable")
	code, err := os.ReadFile(filepath.Join(examplesDir, "compare_logs.star"))
	if err != nil {
		t.Fatal(err)
	}
	v2 := "# second version: keeps the three most similar tasks\n" + strings.Replace(string(code), "[:3]", "[:5]", 1)
	out := s.mustCapture(t, map[string]any{"code": v2, "summary": "compare logs, five tasks",
		"cause": map[string]any{"name": "input dataset unavailable"}}, nil)
	f.compare = procOf(t, out)["name"].(string)

	hostileCode := "# " + xssText + "\nx = tools.get_task_jobs_summary(task_id=task_id)\nreturn {\"note\": \"" +
		strings.ReplaceAll(xssText, `"`, `\"`) + "\", \"x\": x}\n"
	out = s.mustCapture(t, map[string]any{"code": hostileCode, "summary": xssText,
		"cause": map[string]any{"name": xssText, "description": xssText}}, nil)
	f.hostile = procOf(t, out)["name"].(string)

	var cat map[string]any
	s.get(t, "/v1/tools").Into(t, &cat)
	tools := cat["tools"].([]any)
	tools = append(tools, map[string]any{"name": "hostile_tool", "description": xssText, "read_only": true})
	mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/tools", Body: map[string]any{"tools": tools}}), 200)
	return f
}

// TestConsole drives the console in a real headless Chromium against a real
// server: every page loads and shows the API's data, the table filters and
// pages, the procedure page diffs two versions and grants and revokes
// (the API's answer and the audit change), the graph explorer draws and
// expands, and hostile text never runs or injects an element.
func TestConsole(t *testing.T) {
	t.Parallel()
	tab := mustBrowser(t)
	f := mustConsoleFixture(t)
	s := f.s

	t.Run("served with a strict CSP", func(t *testing.T) {
		r := s.get(t, "/ui/")
		csp := r.Header.Get("Content-Security-Policy")
		if r.Status != 200 || !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
			t.Fatalf("GET /ui/: %d, CSP %q", r.Status, csp)
		}
		if strings.Contains(string(r.Body), "<script>") || strings.Contains(string(r.Body), "style=") {
			t.Fatal("the page has inline script or style")
		}
		if r := s.get(t, "/ui/vendor/cytoscape.min.js"); r.Status != 200 || len(r.Body) < 100000 {
			t.Fatalf("cytoscape: %d, %d bytes", r.Status, len(r.Body))
		}
		if r := s.send(t, req{Method: "GET", Path: "/ui/", Header: map[string]string{"Host": "evil.example"}}); r.Status != http.StatusForbidden {
			t.Fatalf("a non-loopback Host got %d", r.Status)
		}
	})

	t.Run("procedures table and filters", func(t *testing.T) {
		tab.open(t, s.URL, "#/procedures")
		var all struct{ Total int }
		s.get(t, "/v1/procedures").Into(t, &all)
		if n := tab.count(t, "#procedures tbody tr"); n != all.Total || all.Total < len(f.examples)+1 {
			t.Fatalf("%d rows, API total %d", n, all.Total)
		}
		tab.mustClean(t, "procedures")
		tab.screenshot(t, "procedures")
		var sc struct{ Total int }
		s.get(t, "/v1/procedures?read_only=false").Into(t, &sc)
		tab.run(t, chromedp.SetValue("#f-read_only", "false", chromedp.ByQuery), chromedp.Click("#apply", chromedp.ByQuery))
		tab.waitJS(t, `location.hash.includes('read_only=false') && document.getElementById('view').dataset.rendered === location.hash`)
		if n := tab.count(t, "#procedures tbody tr"); n != sc.Total || sc.Total == 0 || sc.Total == all.Total {
			t.Fatalf("read_only=false: %d rows, API total %d (of %d)", n, sc.Total, all.Total)
		}
		if got := tab.text(t, "#procedures tbody"); strings.Contains(got, "\tread-only\t") {
			t.Fatalf("a read-only procedure under read_only=false:\n%s", got)
		}
		tab.open(t, s.URL, "#/procedures?limit=25&tool=get_task_jobs_summary")
		if rows := tab.text(t, "#procedures tbody"); !strings.Contains(rows, f.hostile) || strings.Contains(rows, f.compare) {
			t.Fatalf("tool filter:\n%s", rows)
		}
	})

	t.Run("search box", func(t *testing.T) {
		var want struct {
			Procedures []struct{ Name string }
			Total      int
		}
		s.get(t, "/v1/procedures?q=compare+logs").Into(t, &want)
		var all struct{ Total int }
		s.get(t, "/v1/procedures").Into(t, &all)
		if want.Total == 0 || want.Total == all.Total {
			t.Fatalf("q=compare logs matches %d of %d", want.Total, all.Total)
		}
		tab.open(t, s.URL, "#/procedures")
		tab.run(t, chromedp.SendKeys("#f-q", "compare logs", chromedp.ByQuery), chromedp.Click("#apply", chromedp.ByQuery))
		tab.waitJS(t, `location.hash.includes('q=compare+logs') && document.getElementById('view').dataset.rendered === location.hash`)
		var names []string
		tab.eval(t, `[...document.querySelectorAll('#procedures tbody tr td:first-child')].map((td) => td.textContent)`, &names)
		if len(names) != want.Total {
			t.Fatalf("%d rows, the API's q finds %d", len(names), want.Total)
		}
		for i, p := range want.Procedures {
			if names[i] != p.Name {
				t.Fatalf("row %d is %q, the API ranks %q there", i, names[i], p.Name)
			}
		}
		if got := tab.text(t, "#procedures thead"); !strings.Contains(got, "Score") {
			t.Fatalf("no score column: %q", got)
		}
		if v := tab.value(t, "#f-q"); v != "compare logs" {
			t.Fatalf("the search box holds %q", v)
		}
		tab.mustClean(t, "search")
		tab.screenshot(t, "procedures-search")
	})

	t.Run("procedure diff of two versions", func(t *testing.T) {
		tab.open(t, s.URL, "#/procedure/"+f.compare)
		if n := tab.count(t, "#versions tbody tr"); n != 2 {
			t.Fatalf("%d versions shown", n)
		}
		tab.run(t, chromedp.Click("#show-diff", chromedp.ByQuery))
		tab.waitJS(t, `document.querySelectorAll('#diff-out .diff-line').length > 0`)
		added := tab.text(t, "#diff-out .diff-line.add")
		if !strings.Contains(added, "second version") {
			t.Fatalf("the diff's first added line is %q", added)
		}
		if n := tab.count(t, "#diff-out .diff-line.del"); n != 1 {
			t.Fatalf("%d deleted lines, want 1 ([:3])", n)
		}
		if n := tab.count(t, "#code .tok-tool"); n < 3 {
			t.Fatalf("%d highlighted tool calls", n)
		}
		tab.mustClean(t, "procedure")
		tab.screenshot(t, "procedure")
	})

	t.Run("grant and revoke from the page", func(t *testing.T) {
		tab.open(t, s.URL, "#/procedure/"+f.compare)
		autoRun := func() bool {
			return procOf(t, map[string]any{"procedure": s.get(t, "/v1/procedures/"+f.compare).JSON(t)})["auto_run"].(map[string]any)["enabled"].(bool)
		}
		tab.run(t, chromedp.Click("#grant", chromedp.ByQuery))
		tab.waitJS(t, `document.querySelector('#grant-result .error') !== null`)
		if autoRun() {
			t.Fatal("granted without a reason")
		}
		tab.run(t, chromedp.SendKeys("#grant-reason", "reviewed the diff", chromedp.ByQuery), chromedp.Click("#grant", chromedp.ByQuery))
		tab.waitJS(t, `document.querySelector('#revoke') && !document.querySelector('#revoke').disabled`)
		if got := tab.text(t, "#notice"); !strings.Contains(got, "Auto-run granted for "+f.compare) || !strings.Contains(got, "reviewed the diff") {
			t.Fatalf("no confirmation of the grant: %q", got)
		}
		if !autoRun() {
			t.Fatal("the page's grant did not reach the API")
		}
		if d := s.decisions(t, "procedure="+f.compare+"&kind=grant"); len(d) != 1 || d[0]["actor"] != "anonymous" {
			t.Fatalf("grant audit: %v", d)
		}
		if !strings.Contains(tab.text(t, ".audit"), "grant") {
			t.Fatal("the page's audit trail lacks the grant")
		}
		tab.run(t, chromedp.SendKeys("#grant-reason", "done", chromedp.ByQuery), chromedp.Click("#revoke", chromedp.ByQuery))
		tab.waitJS(t, `document.querySelector('#grant') && !document.querySelector('#grant').disabled`)
		if autoRun() {
			t.Fatal("the page's revoke did not reach the API")
		}
		if d := s.decisions(t, "procedure="+f.compare+"&kind=revoke"); len(d) != 1 {
			t.Fatalf("revoke audit: %v", d)
		}
		if got := tab.text(t, "#notice"); !strings.Contains(got, "Auto-run revoked for "+f.compare) || !strings.Contains(got, "done") {
			t.Fatalf("no confirmation of the revoke: %q", got)
		}
		tab.mustClean(t, "grant")
	})

	t.Run("promote from the reason's button", func(t *testing.T) {
		current := func() string {
			var p struct {
				CodeHash string `json:"code_hash"`
			}
			s.get(t, "/v1/procedures/"+f.compare).Into(t, &p)
			return p.CodeHash
		}
		before := current()
		tab.open(t, s.URL, "#/procedure/"+f.compare)
		if tab.count(t, "#promote-reason + #promote-version + #promote") != 1 {
			t.Fatal("the promote reason has no button beside it")
		}
		tab.run(t, chromedp.Click("#promote", chromedp.ByQuery))
		tab.waitJS(t, `document.querySelector('#promote-result .error') !== null`)
		if current() != before {
			t.Fatal("promoted without a reason")
		}
		var target string
		tab.eval(t, `document.getElementById('promote-version').value`, &target)
		tab.run(t, chromedp.SendKeys("#promote-reason", "the five-task version", chromedp.ByQuery), chromedp.Click("#promote", chromedp.ByQuery))
		tab.waitJS(t, `document.querySelector('#notice').textContent.includes('promoted')`)
		if got := current(); got != target || got == before {
			t.Fatalf("current version %s after promoting %s (was %s)", got, target, before)
		}
		tab.waitReady(t)
		var title string
		tab.eval(t, `document.querySelector('#versions code.hash').getAttribute('title')`, &title)
		if len(title) != 64 {
			t.Fatalf("a truncated code hash's title is %q, want the whole hash", title)
		}
		tab.mustClean(t, "promote")
	})

	t.Run("graph explorer draws and expands", func(t *testing.T) {
		tab.open(t, s.URL, "#/graph/tool/get_task_jobs_summary")
		tab.waitJS(t, `window.procgraphExplorer && window.procgraphExplorer.ready`)
		var g struct{ Nodes, Edges []map[string]any }
		s.get(t, "/v1/graph?tool=get_task_jobs_summary").Into(t, &g)
		var ids []string
		tab.eval(t, `window.procgraphExplorer.cy.nodes().map((n) => n.id())`, &ids)
		if len(ids) != len(g.Nodes) {
			t.Fatalf("cytoscape has %d nodes %v, the API %d", len(ids), ids, len(g.Nodes))
		}
		var shot []byte
		tab.run(t, chromedp.Screenshot("#cy", &shot, chromedp.ByQuery))
		if ink := inkedPixels(t, shot); ink < 500 {
			t.Fatalf("the graph canvas is blank (%d inked pixels)", ink)
		}
		// Click the hostile procedure where cytoscape drew it.
		var pos struct{ X, Y float64 }
		tab.eval(t, `(() => { const n = window.procgraphExplorer.cy.getElementById('procedure:`+f.hostile+`');
			const r = document.getElementById('cy').getBoundingClientRect(); const p = n.renderedPosition();
			return {x: r.left + p.x, y: r.top + p.y}; })()`, &pos)
		tab.run(t, chromedp.MouseClickXY(pos.X, pos.Y))
		tab.waitJS(t, `window.procgraphExplorer.expanded === 1 && window.procgraphExplorer.ready`)
		var after int
		tab.eval(t, `window.procgraphExplorer.cy.nodes().length`, &after)
		if after <= len(ids) {
			t.Fatalf("expanding the procedure kept %d nodes (had %d)", after, len(ids))
		}
		tab.mustClean(t, "graph")
		tab.screenshot(t, "graph")
		tab.open(t, s.URL, "#/graph")
		tab.waitJS(t, `window.procgraphExplorer.ready`)
		tab.screenshot(t, "graph-all")
	})

	t.Run("causes, audit and catalogue", func(t *testing.T) {
		tab.open(t, s.URL, "#/causes")
		if n := tab.count(t, "#causes tbody tr"); n != 2 {
			t.Fatalf("%d causes", n)
		}
		tab.mustClean(t, "causes")
		tab.screenshot(t, "causes")
		tab.open(t, s.URL, "#/cause/input%20dataset%20unavailable")
		if n := tab.count(t, "#cause-procedures tbody tr"); n != len(f.examples) {
			t.Fatalf("%d procedures of the cause, want %d", n, len(f.examples))
		}
		tab.screenshot(t, "cause")
		tab.open(t, s.URL, "#/audit?kind=grant")
		if got := tab.text(t, ".audit tbody"); !strings.Contains(got, f.compare) || strings.Contains(got, "revoke") {
			t.Fatalf("audit filtered by kind:\n%s", got)
		}
		tab.open(t, s.URL, "#/audit?actor=nobody")
		if n := tab.count(t, ".audit tbody tr"); n != 0 {
			t.Fatalf("actor filter kept %d rows", n)
		}
		tab.open(t, s.URL, "#/audit")
		tab.mustClean(t, "audit")
		tab.screenshot(t, "audit")
		tab.open(t, s.URL, "#/catalogue")
		if got := tab.text(t, "#tools tbody"); !strings.Contains(got, "hostile_tool") || !strings.Contains(got, "get_task_jobs_summary") {
			t.Fatalf("catalogue:\n%s", got)
		}
		tab.mustClean(t, "catalogue")
		tab.screenshot(t, "catalogue")
	})

	t.Run("one colour per state on every page", func(t *testing.T) {
		colours := map[string]map[string]bool{}
		for _, hash := range []string{"#/procedures", "#/procedure/" + f.compare, "#/procedure/" + f.hostile, "#/catalogue", "#/graph", "#/approvals"} {
			tab.open(t, s.URL, hash)
			if hash == "#/graph" {
				tab.waitJS(t, `window.procgraphExplorer.ready`)
			}
			var page struct {
				Colours map[string][]string
				Loose   []string
			}
			tab.eval(t, stateColoursJS, &page)
			if len(page.Loose) > 0 {
				t.Errorf("%s: state badges outside the state classes: %q", hash, page.Loose)
			}
			for state, cs := range page.Colours {
				if colours[state] == nil {
					colours[state] = map[string]bool{}
				}
				for _, c := range cs {
					colours[state][c] = true
				}
			}
		}
		seen := map[string]string{}
		for _, state := range []string{"read_only", "state_changing", "unknown"} {
			if len(colours[state]) != 1 {
				t.Fatalf("%s has colours %v across the pages", state, colours[state])
			}
			for c := range colours[state] {
				if other, dup := seen[c]; dup {
					t.Fatalf("%s and %s share the colour %s", state, other, c)
				}
				seen[c] = state
			}
		}
	})

	t.Run("tables never break a word", func(t *testing.T) {
		tab.run(t, chromedp.EmulateViewport(900, 1000))
		defer tab.run(t, chromedp.EmulateViewport(1400, 1000))
		for _, hash := range []string{"#/procedures", "#/procedure/" + f.compare, "#/causes", "#/audit", "#/catalogue", "#/cause/input%20dataset%20unavailable"} {
			tab.open(t, s.URL, hash)
			var broken []string
			tab.eval(t, brokenWordsJS, &broken)
			if len(broken) > 0 {
				t.Errorf("%s: words broken across lines: %q", hash, broken)
			}
		}
		tab.screenshot(t, "procedure-narrow")
	})

	t.Run("hostile text stays text on every page", func(t *testing.T) {
		for _, tc := range []struct {
			hash  string
			shown bool // the page shows the hostile text (the others show names only)
		}{
			{"#/procedures", false}, {"#/procedure/" + f.hostile, true}, {"#/causes", true},
			{"#/cause/" + url.PathEscape(xssText), true}, {"#/graph/procedure/" + f.hostile, false},
			{"#/audit", false}, {"#/catalogue", true},
		} {
			tab.open(t, s.URL, tc.hash)
			if strings.HasPrefix(tc.hash, "#/graph") {
				tab.waitJS(t, `window.procgraphExplorer.ready`)
				var labels []string
				tab.eval(t, `window.procgraphExplorer.cy.nodes().map((n) => n.data('label'))`, &labels)
				if !slices.Contains(labels, xssText) {
					t.Fatalf("the hostile cause is not a node label: %q", labels)
				}
			}
			tab.mustClean(t, tc.hash)
			var body string
			tab.eval(t, `document.getElementById('view').innerText`, &body)
			if tc.shown && !strings.Contains(body, xssPayloads[0]) {
				t.Fatalf("%s does not show the hostile text as text:\n%s", tc.hash, body)
			}
		}
		tab.open(t, s.URL, "#/procedure/"+f.hostile)
		tab.screenshot(t, "hostile-procedure")
		// The cause's link on the causes page leads to it.
		tab.open(t, s.URL, "#/causes")
		tab.run(t, chromedp.Evaluate(`[...document.querySelectorAll('#causes a')].find((a) => a.textContent === `+jsString(xssText)+`).click()`, nil))
		tab.waitJS(t, `document.getElementById('cause-name') && document.getElementById('cause-name').textContent === `+jsString(xssText))
		tab.mustClean(t, "the hostile cause's page")
	})
}

// stateColoursJS is, for each state, the colours the page shows it in:
// its badges' backgrounds, the legend's marks and the graph's nodes; and
// the badges that name a state without its class.
const stateColoursJS = `(() => {
	const out = {};
	const add = (state, c) => { (out[state] = out[state] || []).push(c); };
	for (const b of document.querySelectorAll('.badge.state')) add(b.dataset.state, getComputedStyle(b).backgroundColor);
	for (const l of document.querySelectorAll('.legend-item')) for (const s of ['read_only', 'state_changing', 'unknown']) if (l.classList.contains(s)) add(s, getComputedStyle(l, '::before').backgroundColor);
	const ex = window.procgraphExplorer;
	if (location.hash.startsWith('#/graph') && ex && ex.cy) for (const n of ex.cy.nodes('[kind != "cluster"][kind != "cause"]')) {
		const probe = document.createElement('span');
		probe.style.color = n.style('background-color');
		document.body.append(probe);
		add(n.data('cls'), getComputedStyle(probe).color);
		probe.remove();
	}
	const names = ['read-only', 'state-changing', 'unknown'];
	const loose = [...document.querySelectorAll('#view .badge:not(.state)')].map((b) => b.textContent).filter((t) => names.includes(t));
	return { colours: out, loose };
})()`

// brokenWordsJS lists the words of the page's table cells drawn on more
// than one line (a text node's word whose range has several client
// rects), and the truncated code hashes without their whole hash as title.
// A word is a run of letters, digits and underscores: "Freque/ncy" or a
// hash in two is a break inside one; a break at punctuation is not.
const brokenWordsJS = `(() => {
	const out = [];
	for (const cell of document.querySelectorAll('#view td, #view th')) {
		const w = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
		while (w.nextNode()) {
			const node = w.currentNode;
			for (const m of node.data.matchAll(/[\p{L}\p{N}_]+/gu)) {
				const r = document.createRange();
				r.setStart(node, m.index);
				r.setEnd(node, m.index + m[0].length);
				const lines = new Set([...r.getClientRects()].filter((x) => x.width > 0).map((x) => Math.round(x.top)));
				if (lines.size > 1) out.push(m[0]);
			}
		}
	}
	for (const c of document.querySelectorAll('#view code.hash')) {
		const t = c.textContent, full = c.getAttribute('title') || '';
		if (t !== full && !(t.endsWith('…') && full.startsWith(t.slice(0, -1)))) out.push('hash ' + t + ' titled ' + full);
	}
	return out;
})()`

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestConsoleToken: on a server with tokens the page's API calls are
// refused until a token is entered; the token is then kept for the tab
// (sessionStorage) and the grant actions show only with the grant scope.
func TestConsoleToken(t *testing.T) {
	t.Parallel()
	tab := mustBrowser(t)
	file := filepath.Join(t.TempDir(), "tokens.json")
	reader := mustCreateToken(t, file, "ana", "read")
	ops := mustCreateToken(t, file, "ops", "read,capture,grant,admin")
	s := mustServe(t, serverOpts{TokensFile: file})
	s.token = ops
	names := mustCaptureExamples(t, s, "input dataset unavailable")

	tab.open(t, s.URL, "#/procedures")
	if n := tab.count(t, "#procedures tbody tr"); n != 0 {
		t.Fatalf("%d rows without a token", n)
	}
	if got := tab.text(t, "#view"); !strings.Contains(got, "unauthorized") {
		t.Fatalf("the page does not say the call was refused:\n%s", got)
	}
	tab.waitJS(t, `document.getElementById('token-form') !== null`)
	tab.screenshot(t, "token-needed")
	tab.run(t, chromedp.SendKeys("#token", reader, chromedp.ByQuery), chromedp.Click("#token-form button", chromedp.ByQuery))
	tab.waitJS(t, `document.querySelectorAll('#procedures tbody tr').length > 0`)
	if n := tab.count(t, "#procedures tbody tr"); n != len(names) {
		t.Fatalf("%d rows with the token, want %d", n, len(names))
	}
	var stored string
	tab.eval(t, `sessionStorage.getItem('procgraph.token')`, &stored)
	if stored != reader {
		t.Fatal("the token is not kept in sessionStorage")
	}
	// A read-only token: the grant and admin actions are hidden.
	tab.open(t, s.URL, "#/procedure/"+names[0])
	if tab.count(t, "#grant") != 0 || tab.count(t, "#no-grant") != 1 || tab.count(t, ".promote") != 0 {
		t.Fatal("grant actions shown to a token without the grant scope")
	}
	tab.open(t, s.URL, "#/catalogue")
	if tab.count(t, "#catalogue-json") != 0 || tab.count(t, "#no-admin") != 1 {
		t.Fatal("the catalogue upload shown to a token without the admin scope")
	}
	// A token with grant and admin: the actions show.
	var ignored any
	tab.eval(t, `sessionStorage.setItem('procgraph.token', `+jsString(ops)+`)`, &ignored)
	tab.open(t, s.URL, "#/procedure/"+names[0])
	if tab.count(t, "#grant") != 1 || tab.count(t, "#no-grant") != 0 {
		t.Fatal("grant actions hidden from a token with the grant scope")
	}
	tab.open(t, s.URL, "#/catalogue")
	if tab.count(t, "#catalogue-json") != 1 || tab.count(t, "#no-admin") != 0 {
		t.Fatal("the catalogue upload hidden from a token with the admin scope")
	}
	// The scopes came from GET /v1/whoami: the console sent nothing that
	// could change state (it once probed with invalid PUTs).
	metrics := string(s.get(t, "/metrics").Body)
	for _, method := range []string{"PUT", "DELETE"} {
		if strings.Contains(metrics, `procgraph_http_requests_total{method="`+method+`"`) {
			t.Errorf("the console sent %s requests", method)
		}
	}
	if metricValue(metrics, `procgraph_http_requests_total{method="GET",route="/v1/whoami",status="200"}`) < 2 {
		t.Error("the console did not ask GET /v1/whoami for each token")
	}
	tab.mustClean(t, "token")
	tab.run(t, chromedp.Click("#forget-token", chromedp.ByQuery))
	tab.waitJS(t, `sessionStorage.getItem('procgraph.token') === null && document.getElementById('token-form') !== null`)
}

// TestConsoleApprovals: the approvals page shows a pending turn with its
// code and badges, a turn submitted while the page is open appears without
// reloading — through the change feed (GET /v1/changes): the page's
// fallback poll (60 s) is slower than the test waits —, and an operator's run_once with a reason resolves it through
// the API (it leaves the queue); hostile summaries and code stay text.
func TestConsoleApprovals(t *testing.T) {
	t.Parallel()
	tab := mustBrowser(t)
	a := mustTurnServer(t, nil)
	first := a.mustPending(t, killTurn("s-1", 1))
	tab.open(t, a.URL, "#/approvals")
	tab.run(t, chromedp.SendKeys("#token", a.op, chromedp.ByQuery), chromedp.Click("#token-form button", chromedp.ByQuery))
	tab.waitJS(t, `document.querySelectorAll('article.approval').length === 1`)
	tab.waitJS(t, `document.getElementById('approvals-status').dataset.live === 'true'`)
	if got := tab.text(t, "article.approval"); !strings.Contains(got, "kill_job") || !strings.Contains(got, "state-changing") || !strings.Contains(got, "expires in") {
		t.Fatalf("the approval card:\n%s", got)
	}
	hostile := killTurn("s-2", 2)
	hostile["summary"] = xssText
	hostile["code"] = "# " + xssText + "\n" + turnKillCode
	second := a.mustPending(t, hostile)
	tab.waitJS(t, `document.querySelectorAll('article.approval').length === 2`)
	tab.mustClean(t, "approvals")
	if got := tab.text(t, "#view"); strings.Contains(got, "null") || strings.Count(got, "expires in") != 2 {
		t.Fatalf("the approvals page:\n%s", got)
	}
	tab.screenshot(t, "approvals")
	card := `article.approval[data-id="` + first + `"]`
	if got := tab.text(t, card+" .turn-id"); got != first || !strings.HasPrefix(first, "trn_") {
		t.Fatalf("the card shows turn id %q, want %q", got, first)
	}
	if tab.count(t, "#no-history") != 1 {
		t.Fatal("the history is not empty before any resolution")
	}
	tab.run(t, chromedp.SendKeys(card+" .approval-reason", "checked the job id", chromedp.ByQuery),
		chromedp.Click(card+` button[data-choice="run_once"]`, chromedp.ByQuery))
	tab.waitJS(t, `document.querySelectorAll('article.approval').length === 1`)
	if got := tab.text(t, "#notice"); !strings.Contains(got, first) || !strings.Contains(got, "approved to run once") || !strings.Contains(got, "checked the job id") {
		t.Fatalf("no confirmation of the resolution: %q", got)
	}
	tab.waitJS(t, `document.querySelectorAll('#history tbody tr').length === 1`)
	row := tab.text(t, "#history tbody tr")
	for _, want := range []string{first, "run_once", "op", "checked the job id", "state-changing"} {
		if !strings.Contains(row, want) {
			t.Fatalf("the history row lacks %q:\n%s", want, row)
		}
	}
	tab.screenshot(t, "approvals-history")
	var ap map[string]any
	a.as(t, a.op, "GET", "/v1/approvals/"+first, nil).Into(t, &ap)
	if ap["status"] != "approved" {
		t.Fatalf("approval after run_once from the page: %v", ap["status"])
	}
	if tab.count(t, `article.approval[data-id="`+second+`"]`) != 1 {
		t.Fatal("the other approval left the queue")
	}
}
