package main

import (
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	ptext "github.com/procgraph/procgraph/internal/text"
)

// pageText is every text node and every shown attribute (title,
// placeholder) under #view, and the text of each marked escape.
type pageText struct {
	Texts   []string `json:"texts"`
	Escapes []string `json:"escapes"`
}

const pageTextJS = `(() => {
	const view = document.getElementById('view');
	const texts = [], w = document.createTreeWalker(view, NodeFilter.SHOW_TEXT);
	while (w.nextNode()) texts.push(w.currentNode.data);
	for (const el of view.querySelectorAll('[title], [placeholder]')) texts.push(el.getAttribute('title') || '', el.getAttribute('placeholder') || '');
	for (const el of view.querySelectorAll('textarea, input')) texts.push(el.value);
	return { texts, escapes: [...view.querySelectorAll('.esc')].map((e) => e.textContent) };
})()`

// mustShowVisibly reads the page and fails when any text holds a hidden
// character raw (text.Hidden), or when none of wantEscapes is shown as
// a marked escape.
func (b *browserTab) mustShowVisibly(tb testing.TB, where string, wantEscapes ...string) {
	tb.Helper()
	var p pageText
	b.eval(tb, pageTextJS, &p)
	for _, s := range p.Texts {
		if i := strings.IndexFunc(s, ptext.Hidden); i >= 0 {
			tb.Errorf("%s: the page shows %U raw in %q", where, []rune(s[i:])[0], s)
		}
	}
	for _, want := range wantEscapes {
		found := false
		for _, e := range p.Escapes {
			found = found || e == want
		}
		if !found {
			tb.Errorf("%s: no marked escape %s among %q", where, want, p.Escapes)
		}
	}
}

// TestConsoleVisible: the console (dom.js) renders internal/text's shared
// cases as text.Visible does, its marked rendering reads back to the text,
// and an agent's escape sequences, bidi controls and separators in a
// pending turn's code, summary and session, a procedure's summary and
// code, and a cause's name and description are shown as marked escapes —
// never raw — on the approvals, procedures, procedure, causes, cause,
// audit and graph pages; the approval card shows the server's signature,
// classification and code hash beside the code.
func TestConsoleVisible(t *testing.T) {
	t.Parallel()
	tab := mustBrowser(t)
	a := mustTurnServer(t, nil)

	t.Run("dom.js renders the shared cases", func(t *testing.T) {
		raw, err := os.ReadFile("../../internal/text/testdata/visible.json")
		if err != nil {
			t.Fatal(err)
		}
		tab.open(t, a.URL, "#/procedures")
		var got []struct {
			Name      string   `json:"name"`
			Text      string   `json:"text"`
			Line      string   `json:"line"`
			Want      string   `json:"want"`
			WantLine  *string  `json:"want_line"`
			In        string   `json:"in"`
			Nodes     []string `json:"nodes"`
			Marked    []bool   `json:"marked"`
			Unchanged bool     `json:"unchanged"`
		}
		tab.run(t, chromedp.Evaluate(`(async () => {
			const dom = await import('./dom.js');
			const cases = (`+string(raw)+`).cases;
			return cases.map((c) => {
				const box = document.createElement('div');
				box.append(dom.visible(c.in));
				return { ...c, text: dom.visibleText(c.in), line: dom.visibleText(c.in, true),
					nodes: [...box.childNodes].map((n) => n.textContent), marked: [...box.childNodes].map((n) => n.nodeType === 1 && n.className === 'esc') };
			});
		})()`, &got, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
		if len(got) < 10 {
			t.Fatalf("%d cases", len(got))
		}
		for _, c := range got {
			wantLine := c.Want
			if c.WantLine != nil {
				wantLine = *c.WantLine
			}
			if c.Text != c.Want || c.Line != wantLine {
				t.Errorf("%s: visibleText(%q) = %q, line %q; text.Visible %q, line %q", c.Name, c.In, c.Text, c.Line, c.Want, wantLine)
			}
			// The marked rendering: plain parts as written, each escape
			// in its own mark; read back, it is the text.
			var back strings.Builder
			for i, n := range c.Nodes {
				if !c.Marked[i] {
					if strings.IndexFunc(n, ptext.Hidden) >= 0 {
						t.Errorf("%s: an unmarked node holds a hidden character: %q", c.Name, n)
					}
					back.WriteString(n)
					continue
				}
				if !regexp.MustCompile(`^\\u([0-9a-f]{4}|\{[0-9a-f]+\})$`).MatchString(n) {
					t.Errorf("%s: a mark shows %q", c.Name, n)
				}
				hex := strings.Trim(n[2:], "{}")
				r, err := strconv.ParseUint(hex, 16, 32)
				if err != nil {
					t.Fatalf("%s: a mark shows %q", c.Name, n)
				}
				back.WriteRune(rune(r))
			}
			if back.String() != c.In {
				t.Errorf("%s: the marked rendering %q reads back as %q", c.Name, c.Nodes, back.String())
			}
		}
	})

	bad := "\x1b[2K\r\x1b]0;owned\x07\u202e\u2066\u2028\u0085\x7f"
	codeBad := strings.ReplaceAll(bad, "\r", "\x1b[G")
	cause := "cause" + bad
	out := mustStatus(t, a.as(t, a.agent, "POST", "/v1/procedures", map[string]any{
		"code":    "x = tools.get_task_jobs_summary(task_id=task_id)\nnote = \"" + codeBad + "\"\nreturn x",
		"summary": "sum" + bad, "session_id": "s" + "\u202e", "cause": map[string]any{"name": cause, "description": "desc" + bad}}), 201)
	name := procOf(t, out)["name"].(string)
	id := a.mustPending(t, map[string]any{"code": hidingCode, "summary": hidingSummary + "\u202e", "session_id": "m\u2066", "phase": "interactive"})

	tab.open(t, a.URL, "#/approvals")
	tab.run(t, chromedp.SendKeys("#token", a.op, chromedp.ByQuery), chromedp.Click("#token-form button", chromedp.ByQuery))
	tab.waitJS(t, `document.querySelectorAll('article.approval').length === 1`)
	card := `article.approval[data-id="` + id + `"]`
	tab.mustShowVisibly(t, "approvals", `\u001b`, `\u000d`, `\u202e`, `\u2066`, `\u0007`)
	for sel, want := range map[string]string{
		card + " .signature": "kill_job", card + " .badges": "state-changing", card + " pre.code": "tools.kill_job(panda_id=666)",
		card + " h3": `routine read\u000d\u001b[7A`, card + " p.muted": `session m\u2066`, card + " pre.code .esc": `\u001b`,
	} {
		if got := tab.text(t, sel); !strings.Contains(got, want) {
			t.Errorf("approval card %s: %q, want %q", sel, got, want)
		}
	}
	var ap struct {
		CodeHash string `json:"code_hash"`
	}
	a.as(t, a.op, "GET", "/v1/approvals/"+id, nil).Into(t, &ap)
	if got := tab.text(t, card+" .code-hash"); got != "code hash "+ap.CodeHash {
		t.Errorf("the card's code hash %q, the server's %q", got, ap.CodeHash)
	}
	tab.screenshot(t, "approvals-visible")
	// Opened, the editor holds the code as the card shows it.
	var editor string
	tab.eval(t, `document.querySelector('`+card+` textarea').value`, &editor)
	if !strings.Contains(editor, `note = "\u001b]0;owned\u0007`) || strings.IndexFunc(editor, ptext.Hidden) >= 0 {
		t.Errorf("the editor holds %q", editor)
	}
	tab.mustClean(t, "approvals")

	for _, p := range []struct {
		hash    string
		escapes []string
	}{
		{"#/procedures", nil},
		{"#/procedure/" + name, []string{`\u001b`, `\u202e`, `\u2028`, `\u0085`, `\u007f`}},
		{"#/causes", []string{`\u001b`, `\u000d`}},
		{"#/cause/" + url.PathEscape(cause), []string{`\u001b`, `\u000d`, `\u2066`}},
		{"#/audit", nil},
	} {
		tab.open(t, a.URL, p.hash)
		tab.mustShowVisibly(t, p.hash, p.escapes...)
		tab.mustClean(t, p.hash)
	}
	tab.open(t, a.URL, "#/graph/procedure/"+name)
	tab.waitJS(t, `window.procgraphExplorer && window.procgraphExplorer.ready`)
	var labels []string
	tab.eval(t, `window.procgraphExplorer.cy.nodes().map((n) => n.data('shown'))`, &labels)
	found := false
	for _, l := range labels {
		if strings.IndexFunc(l, ptext.Hidden) >= 0 || strings.ContainsAny(l, "\n\t") {
			t.Errorf("a graph label holds a hidden character: %q", l)
		}
		found = found || strings.HasPrefix(l, `cause\u001b[2K\u000d`)
	}
	if !found {
		t.Errorf("the graph does not label the cause visibly: %q", labels)
	}
	tab.mustClean(t, "graph")
}
