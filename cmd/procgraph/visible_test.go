package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	ptext "github.com/procgraph/procgraph/internal/text"
)

// hidingCode calls kill_job and then, from inside a string literal, moves
// the cursor up, erases the lines it wrote, returns to the first column
// and sets the window title: on
// a terminal that the code is written to raw, the kill_job line is gone.
const hidingCode = "x = tools.get_task_jobs_summary(task_id=1)\n" +
	"tools.kill_job(panda_id=666)\n" +
	"note = \"\x1b]0;owned\x07\x1b[1A\x1b[2K\x1b[1A\x1b[2K\x1b[G\"\n" +
	"return x"

// hidingSummary moves the cursor up over `approvals show`'s key: value
// lines and writes its own tools, read-only and state lines over them,
// ending each with a carriage return (the lines are 200 columns: past
// anything they cover).
var hidingSummary = "routine read\r\x1b[7A\x1b[2Ktools:                 get_task_jobs_summary\r\x1b[1B\x1b[2Kread-only:             yes\r" +
	"\x1b[4B\x1b[2K\r\x1b[1Bsummary:               routine read" + strings.Repeat(" ", 40) + "\r"

// tmuxPane runs one command in a detached tmux session of its own
// server (200x50), waits for it to exit, and returns what the terminal
// shows and the pane's title.
func tmuxPane(t *testing.T, env []string, argv ...string) (screen, title string) {
	t.Helper()
	return tmuxPaneOf(t, paneOpts{cols: 200}, env, argv...)
}

// paneOpts shape a tmuxPane: its columns, and whether the screen keeps
// the colours (capture-pane -e) and joins wrapped lines (-J).
type paneOpts struct {
	cols          int
	colors, joins bool
}

// tmuxPaneOf is tmuxPane in a pane shaped by o.
func tmuxPaneOf(t *testing.T, o paneOpts, env []string, argv ...string) (screen, title string) {
	t.Helper()
	tmux := requireCommand(t, "tmux", "apt-get install tmux")
	sock := fmt.Sprintf("procgraph-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-L", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %q: %v\n%s", args, err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { _ = exec.Command(tmux, "-L", sock, "kill-server").Run() })
	shell := "env"
	for _, kv := range env {
		shell += " " + shellQuote(kv)
	}
	for _, a := range argv {
		shell += " " + shellQuote(a)
	}
	run("start-server", ";", "set-option", "-g", "remain-on-exit", "on", ";", "set-option", "-g", "status", "off", ";",
		"new-session", "-d", "-s", "t", "-x", strconv.Itoa(o.cols), "-y", "50", shell)
	for deadline := time.Now().Add(30 * time.Second); strings.TrimSpace(run("display-message", "-p", "-t", "t", "#{pane_dead}")) != "1"; {
		if time.Now().After(deadline) {
			t.Fatalf("the command did not exit:\n%s", run("capture-pane", "-p", "-t", "t"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	capture := []string{"capture-pane", "-p", "-S", "-", "-t", "t"}
	if o.colors {
		capture = append(capture, "-e")
	}
	if o.joins {
		capture = append(capture, "-J")
	}
	return run(capture...), strings.TrimSpace(run("display-message", "-p", "-t", "t", "#{pane_title}"))
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestCLIShowsHiddenCharactersInATerminal runs the real procgraph (this
// test binary re-executed as it) in a real terminal (tmux): an agent's
// turn whose code and summary carry escape sequences that move the
// cursor, erase lines, overwrite with carriage returns and set the
// window title to hide kill_job. `approvals show` and `approvals list`
// must leave kill_job in the tools and state lines, read-only "no", the
// escapes visible as \u001b, and the title alone (docs/design.md "What the
// operator sees is what runs").
func TestCLIShowsHiddenCharactersInATerminal(t *testing.T) {
	t.Parallel()
	a := mustTurnServer(t, nil)
	turn := map[string]any{"code": hidingCode, "summary": hidingSummary, "session_id": "s-\u202eboj_llik", "phase": "interactive"}
	id := a.mustPending(t, turn)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := []string{runMainEnv + "=1", "PROCGRAPH_URL=" + a.URL, "PROCGRAPH_TOKEN=" + a.op, "TERM=xterm"}

	screen, title := tmuxPane(t, env, exe, "approvals", "show", id)
	t.Logf("approvals show, as the terminal shows it:\n%s", screen)
	for _, want := range []string{`(?m)^tools:\s+get_task_jobs_summary, kill_job\s*$`, `(?m)^read-only:\s+no\s*$`,
		`(?m)^changes state through:\s+kill_job\s*$`, `(?m)^tools\.kill_job\(panda_id=666\)$`,
		`(?m)^session:\s+s-\\u202eboj_llik\s*$`, `\\u001b\[2K\\u000d`, `\\u001b\]0;owned\\u0007\\u001b\[1A\\u001b\[2K\\u001b\[1A\\u001b\[2K\\u001b\[G`} {
		if !regexp.MustCompile(want).MatchString(screen) {
			t.Errorf("approvals show: the screen does not match %s", want)
		}
	}
	if regexp.MustCompile(`(?m)^read-only:\s+yes`).MatchString(screen) || strings.Contains(title, "owned") {
		t.Errorf("approvals show: the agent's text rewrote the terminal (title %q)", title)
	}

	screen, title = tmuxPane(t, env, exe, "approvals", "list")
	t.Logf("approvals list, as the terminal shows it:\n%s", screen)
	if !regexp.MustCompile(id + `\s+s-\\u202eboj_llik\s+pending\s+get_task_jobs_summary,kill_job\s+no\s`).MatchString(screen) {
		t.Errorf("approvals list: the row does not show the session escaped, kill_job and read-only no")
	}
	if strings.Contains(title, "owned") {
		t.Errorf("approvals list: the title is %q", title)
	}
}

// TestCLIOutputVisible: every human rendering of a field an agent or a
// tool server could have written holds no character a terminal acts on
// (ptext.Hidden), whatever command prints it; --json stays the server's
// bytes.
func TestCLIOutputVisible(t *testing.T) {
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up})
	t.Setenv("PROCGRAPH_URL", s.URL)
	bad := "\x1b[2K\r\x1b]0;owned\x07\u202e\u2028\u0085\x7f"
	code := "x = tools.get_task_jobs_summary(task_id=task_id)\nnote = \"" + strings.ReplaceAll(bad, "\r", "\x1b[G") + "\"\nreturn x"
	out := s.mustCapture(t, map[string]any{"code": code, "summary": "sum" + bad, "session_id": "s" + "\u202e\u2066",
		"cause": map[string]any{"name": "cause" + bad, "description": "desc" + bad}}, nil)
	name := procOf(t, out)["name"].(string)
	hash := procOf(t, out)["code_hash"].(string)
	file := filepath.Join(t.TempDir(), "hide.star")
	if err := os.WriteFile(file, []byte(code), 0o600); err != nil {
		t.Fatal(err)
	}
	// The turn is another program than the granted one (which would run
	// under its grant): it waits for review, so that approvals list shows it.
	turnFile := filepath.Join(t.TempDir(), "hide-turn.star")
	if err := os.WriteFile(turnFile, []byte(strings.Replace(code, "return x", "return [x]", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, _, errOut := runMain(t, "autorun", "grant", name, "--reason", "reason"+bad); c != 0 {
		t.Fatal(errOut)
	}
	for _, tc := range []struct {
		args  []string
		shows bool // shows a field with an escape
	}{
		{[]string{"procedures", "list"}, false}, {[]string{"procedures", "show", name}, true},
		{[]string{"versions", name}, false}, {[]string{"versions", name, hash}, true},
		{[]string{"decisions"}, true}, {[]string{"causes"}, true}, {[]string{"causes", "cause" + bad}, true},
		{[]string{"graph", "--procedure", name}, true},
		{[]string{"turn", turnFile, "--session", "s\u202e", "--phase", "interactive", "--arg", "task_id=1", "--summary", "sum" + bad}, false},
		{[]string{"policies", "list", "s\u202e"}, false}, {[]string{"approvals", "list", "--status", ""}, true},
		{[]string{"signature", file}, false}, {[]string{"procedures", "show", "no-such" + bad}, true},
	} {
		c, stdout, stderr := runMain(t, tc.args...)
		for _, o := range []string{stdout, stderr} {
			if i := strings.IndexFunc(o, ptext.Hidden); i >= 0 {
				t.Errorf("%q (exit %d) printed %U raw:\n%q", tc.args, c, []rune(o[i:])[0], o)
			}
		}
		if tc.shows && !strings.Contains(stdout+stderr, `\u`) {
			t.Errorf("%q (exit %d) shows no escape:\n%s%s", tc.args, c, stdout, stderr)
		}
	}
	_, stdout, _ := runMain(t, "procedures", "show", name, "--json")
	if !strings.Contains(stdout, `\u001b[2K\u001b[G`) {
		t.Errorf("--json is not the server's JSON:\n%s", stdout)
	}
}

// TestMCPReviewVisible: the review an operator reads in an MCP client
// (the elicitation's message) shows the signature, the classification and
// the code hash the server computed next to the code, and the agent's
// code and summary with their escape sequences and bidi controls
// visible, never raw.
func TestMCPReviewVisible(t *testing.T) {
	up := mustUpstream(t)
	// The operator's token: only a grant holder reviews in the client.
	s, _ := mustServeFirstTokens(t, serverOpts{Upstream: up, AllowMutating: true})
	var message string
	sess := mustMCPClient(t, s, "/mcp/interactive", &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			message = req.Params.Message
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	res := callRunCode(t, sess, map[string]any{"code": hidingCode, "summary": hidingSummary + "\u202e", "session_id": "m\u2066"})
	if !res.IsError {
		t.Fatalf("a declined review ran: %s", mcpText(res))
	}
	up.mustSeeNothing(t, "a declined review")
	t.Logf("the review:\n%s", message)
	if i := strings.IndexFunc(message, ptext.Hidden); i >= 0 {
		t.Errorf("the review holds %U raw: %q", []rune(message[i:])[0], message)
	}
	var ap struct {
		CodeHash string `json:"code_hash"`
	}
	var list struct {
		Approvals []struct {
			ID string `json:"id"`
		} `json:"approvals"`
	}
	s.get(t, "/v1/approvals?status=rejected").Into(t, &list)
	if len(list.Approvals) != 1 {
		t.Fatalf("approvals: %v", list)
	}
	s.get(t, "/v1/approvals/"+list.Approvals[0].ID).Into(t, &ap)
	for _, want := range []string{`(?m)^Signature: get_task_jobs_summary, kill_job$`, `(?m)^Read-only: no: it changes state through kill_job$`,
		`(?m)^Code hash: ` + ap.CodeHash + `$`, `(?m)^Session: m\\u2066$`, `(?m)^Summary \(the agent's\): routine read\\u000d\\u001b\[7A.*\\u202e$`,
		`(?m)^tools\.kill_job\(panda_id=666\)$`, `note = "\\u001b\]0;owned\\u0007\\u001b\[1A`} {
		if !regexp.MustCompile(want).MatchString(message) {
			t.Errorf("the review does not match %s", want)
		}
	}
}

// TestCLIShowsMarkupAsItIs: `<`, `>` and `&` in what the CLI shows (a
// summary, a cause, code, a replay's result, a turn's arguments) are
// printed as they are, not as JSON's HTML escapes (\u003c, which the
// display escape would then show as \u005cu003c); the display escape
// still shows a control character in the same value.
func TestCLIShowsMarkupAsItIs(t *testing.T) {
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up})
	env := map[string]string{"PROCGRAPH_URL": s.URL}
	const markup = "<b>&amp;</b>"
	code := "x = tools.get_task_jobs_summary(task_id=1)\nreturn {\"html\": \"" + markup + "\", \"esc\": \"\\x1b\"}"
	out := s.mustCapture(t, map[string]any{"code": code, "summary": "sum " + markup,
		"cause": map[string]any{"name": "cause " + markup, "description": "desc " + markup}}, nil)
	name := procOf(t, out)["name"].(string)
	if c, _, errOut := runMainWith(t, env, "autorun", "grant", name, "--reason", "reviewed "+markup); c != 0 {
		t.Fatal(errOut)
	}
	for _, args := range [][]string{
		{"procedures", "show", name}, {"causes"}, {"causes", "cause " + markup}, {"decisions"},
		{"invoke", name, "--phase", "interactive", "--arg", "task_id=1"},
	} {
		c, stdout, stderr := runMainWith(t, env, args...)
		if c != 0 || !strings.Contains(stdout, markup) || strings.Contains(stdout, `\u003c`) || strings.Contains(stdout, `\u0026`) {
			t.Errorf("%q (exit %d) does not show %s as it is:\n%s%s", args, c, markup, stdout, stderr)
		}
		if i := strings.IndexFunc(stdout, ptext.Hidden); i >= 0 {
			t.Errorf("%q printed %U raw:\n%q", args, []rune(stdout[i:])[0], stdout)
		}
	}
	_, stdout, _ := runMainWith(t, env, "invoke", name, "--phase", "interactive", "--arg", "task_id=1")
	if !strings.Contains(stdout, `"esc":"\u005cu001b"`) {
		t.Errorf("the result's control character is not shown escaped:\n%s", stdout)
	}
}
