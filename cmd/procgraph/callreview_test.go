package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestPausedCallShown: the call a turn paused at is printed first — its
// tool, its arguments as evaluated, its schema hash — then the code with
// the stopping line marked and the reads so far; a hostile argument or
// response (an escape sequence, a bidirectional override, a line
// separator, a newline) is shown as escapes, never raw; arguments the
// server did not send (no grant scope) are said to be hidden.
func TestPausedCallShown(t *testing.T) {
	const hostile = "\x1b[2J\u202eevil\u2028\nline"
	args, _ := json.Marshal(map[string]any{"text": hostile})
	resp := `{"n":3,"note":"` + "\x1b[2J\u202eevil\u2028" + `\nline"}`
	c := &pausedCall{Position: 1, Line: 2, Tool: "record_note", SchemaHash: "sh", ArgsDigest: "dg", Arguments: args}
	code := "r = tools.search_panda_docs(query=q)\ntools.record_note(text=r[\"note\"])\nreturn r\n"
	reads := []pausedRead{{Tool: "search_panda_docs", Arguments: json.RawMessage(`{"query":"x"}`), Response: resp, Truncated: true, Bytes: 9000}}
	var b strings.Builder
	printPausedCall(&b, c, code, reads)
	out := b.String()
	t.Logf("\n%s", out)
	if strings.ContainsAny(out, "\x1b\u202e\u2028") {
		t.Fatalf("a hidden character printed raw:\n%q", out)
	}
	for _, want := range []string{
		"call:        tools.record_note (call 2 of the run, line 2)",
		`arguments:   {"text":"\u001b[2J\u202eevil\u2028\nline"}`,
		"schema hash: sh",
		"> 2  tools.record_note(text=r[\"note\"])",
		"  1  r = tools.search_panda_docs(query=q)",
		`1. tools.search_panda_docs {"query":"x"}`,
		`-> {"n":3,"note":"\u001b[2J\u202eevil\u2028\nline"} (truncated: `,
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "tools.record_note (call") > strings.Index(out, "r = tools.search") {
		t.Fatalf("the call is not first:\n%s", out)
	}
	c.Arguments = nil
	b.Reset()
	printPausedCall(&b, c, code, nil)
	if !strings.Contains(b.String(), "arguments:   not shown: the grant scope reads them (digest dg)") {
		t.Fatalf("arguments not sent:\n%s", b.String())
	}
}

// callReviewWorld is a server (mutating auto-run on) and a turn the agent
// submitted with `procgraph turn --review at-call`: callReviewBlock,
// paused before its first state-changing call (record_note, with the
// hostile text it read), its read made.
type callReviewWorld struct {
	*turnActors
	up  *upstream
	id  string
	env map[string]string // the operator's CLI environment
}

func mustCallReviewWorld(t *testing.T) *callReviewWorld {
	t.Helper()
	w := &callReviewWorld{up: mustUpstream(t)}
	w.turnActors = mustTurnServer(t, w.up)
	w.env = map[string]string{"PROCGRAPH_URL": w.URL, "PROCGRAPH_TOKEN": w.op}
	file := filepath.Join(t.TempDir(), "block.star")
	if err := os.WriteFile(file, []byte(callReviewBlock), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runMainWith(t, map[string]string{"PROCGRAPH_URL": w.URL, "PROCGRAPH_TOKEN": w.agent},
		"turn", file, "--session", "atcall", "--phase", "interactive", "--review", "at-call", "--json")
	var a struct {
		Turn struct {
			ID     string `json:"id"`
			Status string `json:"status"`
			Review string `json:"review"`
			Call   *struct {
				Tool string `json:"tool"`
			} `json:"call"`
		} `json:"turn"`
	}
	if err := json.Unmarshal([]byte(out), &a); err != nil || code != 3 || a.Turn.Status != "pending" || a.Turn.Review != "at_call" ||
		a.Turn.Call == nil || a.Turn.Call.Tool != "record_note" {
		t.Fatalf("turn --review at-call: exit %d (%v)\n%s\n%s", code, err, out, errOut)
	}
	if tools := w.up.tools(); !slices.Equal(tools, []string{"search_panda_docs"}) {
		t.Fatalf("before any answer the upstream saw %v, want the read only", tools)
	}
	w.id = a.Turn.ID
	return w
}

// TestCallReviewInATerminal: `approvals show` of a turn paused at a call,
// in a real terminal, shows that call first — its tool, its arguments as
// the run evaluated them (the hostile text it read, as escapes), its
// schema hash —, then the code with the stopping line marked, the read
// made before it (its hostile answer as escapes) and what each answer
// covers; nothing hidden reaches the terminal raw. `approvals approve
// --choice run_once` runs that call once; `turn wait` resumes the run to
// the next call (kill_job, with panda_id 101, which only the run knew),
// shown first again, and run_all runs it to the end: each call reached
// the upstream once.
func TestCallReviewInATerminal(t *testing.T) {
	t.Parallel()
	w := mustCallReviewWorld(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := []string{runMainEnv + "=1", "PROCGRAPH_URL=" + w.URL, "PROCGRAPH_TOKEN=" + w.op, "TERM=xterm", "NO_COLOR=1"}
	show := func() string {
		term := startTerminal(t, env, "sh", "-c", `"$@"; echo "exit $?"; read _`, "sh", exe, "approvals", "show", w.id)
		term.waitFor(`(?s)what each answer covers:.*\sexit 0`)
		out := term.run("capture-pane", "-p", "-J", "-S", "-", "-t", "t")
		term.run("send-keys", "-t", "t", "Enter")
		t.Logf("approvals show:\n%s", out)
		if strings.ContainsAny(out, "\x1b\u202e") {
			t.Fatalf("approvals show printed a hidden character raw:\n%q", out)
		}
		if first := strings.TrimSpace(out); !strings.HasPrefix(first, "paused before a state-changing call") {
			t.Fatalf("approvals show does not start with the call:\n%s", out)
		}
		return out
	}
	screen := show()
	for _, want := range []string{"call:        tools.record_note (call 2 of the run, line 2)",
		`arguments:   {"text":"\u001b[2J<img src=x onerror=window.pwned=1>\u202eevil"}`, "schema hash: ",
		"> 2  tools.record_note(text=n[", "  1  n = tools.search_panda_docs(", "1. tools.search_panda_docs ",
		`"query":"\u001b[2J<img src=x onerror=window.pwned=1>\u202eevil"`, "run_all", "what each answer covers:"} {
		if !strings.Contains(screen, want) {
			t.Fatalf("approvals show lacks %q:\n%s", want, screen)
		}
	}

	if code, out, errOut := runMainWith(t, w.env, "approvals", "list"); code != 0 || !strings.Contains(out, "pending at tools.record_note") {
		t.Fatalf("approvals list: exit %d\n%s\n%s", code, out, errOut)
	}
	// Without the grant scope: the call's digest, never its arguments or
	// what the reads answered.
	code, out, errOut := runMainWith(t, map[string]string{"PROCGRAPH_URL": w.URL, "PROCGRAPH_TOKEN": w.viewer}, "approvals", "show", w.id)
	if code != 0 || !strings.Contains(out, "arguments:   not shown: the grant scope reads them (digest sha256:") || strings.Contains(out, "-> ") || strings.Contains(out, `{"text":`) {
		t.Fatalf("approvals show without the grant scope: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runMainWith(t, w.env, "approvals", "approve", w.id, "--choice", "run_once", "--reason", "the note is fine")
	if code != 0 || !strings.Contains(errOut, "answering tools.record_note (call 2;") {
		t.Fatalf("approvals approve run_once: exit %d\n%s\n%s", code, out, errOut)
	}
	agentEnv := map[string]string{"PROCGRAPH_URL": w.URL, "PROCGRAPH_TOKEN": w.agent}
	code, out, errOut = runMainWith(t, agentEnv, "turn", "wait", w.id, "--timeout", "0")
	if code != 3 || !strings.Contains(out, "tools.kill_job (call 4, line 4;") {
		t.Fatalf("turn wait after run_once: exit %d\n%s\n%s", code, out, errOut)
	}
	if tools := w.up.tools(); !slices.Equal(tools, []string{"search_panda_docs", "record_note", "get_task_jobs_summary"}) {
		t.Fatalf("after run_once the upstream saw %v", tools)
	}
	screen = show()
	for _, want := range []string{"call:        tools.kill_job (call 4 of the run, line 4)", `arguments:   {"panda_id":101}`, "> 4  tools.kill_job("} {
		if !strings.Contains(screen, want) {
			t.Fatalf("approvals show (the second call) lacks %q:\n%s", want, screen)
		}
	}
	if code, out, errOut = runMainWith(t, w.env, "approvals", "approve", w.id, "--choice", "run_all", "--reason", "kill it", "--call", "0000"); code != 1 ||
		!strings.Contains(errOut, "call_changed") {
		t.Fatalf("an answer pinned to another call: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut = runMainWith(t, w.env, "approvals", "approve", w.id, "--choice", "run_all", "--reason", "kill it"); code != 0 {
		t.Fatalf("approvals approve run_all: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut = runMainWith(t, agentEnv, "turn", "wait", w.id, "--timeout", "0"); code != 0 {
		t.Fatalf("turn wait after run_all: exit %d\n%s\n%s", code, out, errOut)
	}
	if tools := w.up.tools(); !slices.Equal(tools, []string{"search_panda_docs", "record_note", "get_task_jobs_summary", "kill_job"}) {
		t.Fatalf("the upstream saw %v, want each call once", tools)
	}
}

// TestCallReviewInTheConsole: a turn paused at a call is, on the
// approvals page, a card whose first thing is that call — its tool and
// its arguments as the run evaluated them (the hostile text it read,
// marked escapes, the HTML in it as text) —, then the read made before it
// (its hostile answer as text: no element, no script of it), the code
// with the stopping line marked, and the answers for that call; "Run this
// call" answers for it (bound to it) and the run goes on to the next
// call, kill_job with panda_id 101, shown first again.
func TestCallReviewInTheConsole(t *testing.T) {
	t.Parallel()
	tab := mustBrowser(t)
	w := mustCallReviewWorld(t)
	tab.open(t, w.URL, "#/approvals")
	tab.run(t, chromedp.SendKeys("#token", w.op, chromedp.ByQuery), chromedp.Click("#token-form button", chromedp.ByQuery))
	card := `article.approval[data-id="` + w.id + `"]`
	tab.waitJS(t, `!!document.querySelector('`+card+` .paused-call')`)
	var first string
	tab.eval(t, `document.querySelector('`+card+`').firstElementChild.className`, &first)
	if first != "paused-call" {
		t.Fatalf("the card's first element is %q, not the call", first)
	}
	call := tab.text(t, card+" .paused-call")
	for _, want := range []string{"Paused before tools.record_note(…)", "call 2 of the run, line 2", `"text": "\u001b[2J<img src=x onerror=window.pwned=1>`, "evil"} {
		if !strings.Contains(call, want) {
			t.Fatalf("the call lacks %q:\n%s", want, call)
		}
	}
	if got := tab.text(t, card+" .reads"); !strings.Contains(got, "tools.search_panda_docs") || !strings.Contains(got, `\u001b[2J\u003cimg src=x onerror=window.pwned=1\u003e\u202eevil`) ||
		!strings.Contains(got, `"query":"\u001b[2J<img src=x onerror=window.pwned=1>`) {
		t.Fatalf("the reads:\n%s", got)
	}
	if got := tab.text(t, card+" .marked-code .stop-line"); !strings.Contains(got, "tools.record_note(text=n[") {
		t.Fatalf("the marked line: %q", got)
	}
	var injected bool
	tab.eval(t, `!!document.querySelector('`+card+` img') || window.pwned === 1`, &injected)
	if injected {
		t.Fatal("a read's answer or an argument was taken as HTML")
	}
	tab.mustShowVisibly(t, "a call's review", `\u202e`)
	if n := tab.count(t, card+` button[data-choice="run_all"]`); n != 1 {
		t.Fatalf("%d run_all buttons", n)
	}
	tab.screenshot(t, "call-review")

	tab.run(t, chromedp.SendKeys(card+" .approval-reason", "the note is fine", chromedp.ByQuery),
		chromedp.Click(card+` button[data-choice="run_once"]`, chromedp.ByQuery))
	tab.waitJS(t, `!document.querySelector('`+card+`')`)
	// The requester's run goes on to the next call.
	mustStatus(t, w.as(t, w.agent, "POST", "/v1/turns/"+w.id+"/run", nil), 202)
	tab.waitJS(t, `(document.querySelector('`+card+` .paused-call') || {textContent: ''}).textContent.includes('tools.kill_job')`)
	if got := tab.text(t, card+" .paused-call"); !strings.Contains(got, `"panda_id": 101`) {
		t.Fatalf("the second call:\n%s", got)
	}
	if tools := w.up.tools(); !slices.Equal(tools, []string{"search_panda_docs", "record_note", "get_task_jobs_summary"}) {
		t.Fatalf("the upstream saw %v", tools)
	}
	tab.mustClean(t, "call review")
}
