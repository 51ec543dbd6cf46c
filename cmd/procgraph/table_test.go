package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/rivo/uniseg"
)

func TestFitColumns(t *testing.T) {
	for _, tc := range []struct {
		name   string
		widths []int
		heads  []string
		width  int
		want   []int
	}{
		{"fits: unchanged", []int{4, 10, 6}, []string{"ID", "NOTE", "X"}, 80, []int{4, 10, 6}},
		{"no width: unchanged", []int{40, 100}, []string{"ID", "NOTE"}, 0, []int{40, 100}},
		{"the widest gives way first", []int{10, 60, 20}, []string{"ID", "NOTE", "SUMMARY"}, 60, []int{10, 26, 20}},
		{"two wide columns meet", []int{10, 50, 50}, []string{"ID", "A", "B"}, 60, []int{10, 23, 23}},
		{"never below a header", []int{10, 40, 40}, []string{"ID", "REQUESTED BY", "B"}, 34, []int{10, 12, 8}},
		{"ids and states are never cut", []int{30, 9, 20}, []string{"ID", "STATUS", "NOTE"}, 51, []int{30, 9, 8}},
		{"the rightmost cuttable column is left out", []int{30, 9, 20, 20}, []string{"ID", "STATUS", "NOTE", "SUMMARY"}, 52, []int{30, 9, 9, -1}},
		{"nothing to leave out: the terminal wraps", []int{30, 30}, []string{"ID", "STATUS"}, 40, []int{30, 30}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fitColumns(tc.widths, tc.heads, tc.width)
			if !slicesEqual(got, tc.want) {
				t.Fatalf("fitColumns(%v, width %d) = %v, want %v", tc.widths, tc.width, got, tc.want)
			}
		})
	}
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"short", 8, "short"},
		{"exactly8", 8, "exactly8"},
		{"get_task_jobs_summary", 8, "get_tas…"},
		{"日本語のテキスト", 8, "日本語…"}, // wide characters count two cells
	} {
		if got := cut(tc.in, tc.width); got != tc.want || uniseg.StringWidth(got) > tc.width {
			t.Errorf("cut(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

// TestTableNotATerminal: output that is not a terminal keeps every cell
// whole and no colour, whatever its width.
func TestTableNotATerminal(t *testing.T) {
	var b bytes.Buffer
	long := strings.Repeat("x", 300)
	table(&b, "ID\tSTATUS\tNOTE", [][]string{{"d1", "failed", long}})
	if !strings.Contains(b.String(), long) || strings.Contains(b.String(), "\x1b") {
		t.Fatalf("a table to a pipe was cut or coloured:\n%q", b.String())
	}
}

// TestCLITablesFitTheTerminal runs the real procgraph in a real terminal
// (tmux) 80 columns wide: `approvals list` fits it, the long cells cut
// with "…", the status coloured; --wide prints whole cells; NO_COLOR and
// --no-color print no colour.
func TestCLITablesFitTheTerminal(t *testing.T) {
	t.Parallel()
	a := mustTurnServer(t, nil)
	session := "session-" + strings.Repeat("s", 70)
	a.mustPending(t, map[string]any{"code": "return tools.kill_job(panda_id=7)", "summary": "kill", "session_id": session, "phase": "interactive"})
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := []string{runMainEnv + "=1", "PROCGRAPH_URL=" + a.URL, "PROCGRAPH_TOKEN=" + a.op, "TERM=xterm"}

	for _, cols := range []int{80, 120} {
		screen, _ := tmuxPaneOf(t, paneOpts{cols: cols, colors: true, joins: true}, env, exe, "approvals", "list")
		t.Logf("approvals list in %d columns:\n%s", cols, screen)
		plain := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(screen, "")
		for _, line := range strings.Split(plain, "\n") {
			if w := uniseg.StringWidth(line); w > cols {
				t.Errorf("a line of %d columns in a %d-column terminal: %q", w, cols, line)
			}
		}
		if strings.Contains(plain, session) {
			t.Errorf("%d columns: the long session is whole", cols)
		}
		if cols == 80 && !regexp.MustCompile(`--wide shows SESSION`).MatchString(plain) {
			t.Errorf("80 columns: the columns left out are not named")
		}
		if cols == 120 && !regexp.MustCompile(`session-s+…`).MatchString(plain) {
			t.Errorf("120 columns: the session is not cut with …")
		}
		if !strings.Contains(screen, "\x1b[33mpending") {
			t.Errorf("%d columns: pending is not coloured", cols)
		}
	}

	screen, _ := tmuxPaneOf(t, paneOpts{cols: 80, colors: true, joins: true}, env, exe, "approvals", "list", "--wide")
	if !strings.Contains(screen, session) {
		t.Errorf("--wide: the session is not whole:\n%s", screen)
	}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
	}{
		{"NO_COLOR", append(env, "NO_COLOR=1"), nil},
		{"--no-color", env, []string{"--no-color"}},
	} {
		screen, _ = tmuxPaneOf(t, paneOpts{cols: 80, colors: true, joins: true}, tc.env, append([]string{exe, "approvals", "list"}, tc.args...)...)
		if strings.Contains(screen, "\x1b[33m") || !strings.Contains(screen, "pending") {
			t.Errorf("%s: the list is coloured or missing:\n%q", tc.name, screen)
		}
	}
}

// TestCLIUsageErrors: a value outside a flag's few is a usage error
// (exit 2, nothing sent) that lists the values it takes; an operator's
// answer without a reason is one too, as in the console.
func TestCLIUsageErrors(t *testing.T) {
	t.Setenv("PROCGRAPH_URL", "http://127.0.0.1:1") // nothing listens: a request would fail otherwise
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"approvals list --status", []string{"approvals", "list", "--status", "any"}, `"any" is not "", pending, approved, rejected`},
		{"decisions --kind", []string{"decisions", "--kind", "bogus"}, `"bogus" is not "", invoke, grant, revoke`},
		{"turn --phase", []string{"turn", "x.star", "--session", "s", "--phase", "auto"}, `"auto" is not automatic or interactive`},
		{"approvals approve --choice", []string{"approvals", "approve", "t1", "--choice", "yes"}, `"yes" is not run_once, run_all, auto_run or always_ask`},
		{"approvals approve without --reason", []string{"approvals", "approve", "t1", "--choice", "run_once"}, "--reason is required"},
		{"approvals reject with a blank --reason", []string{"approvals", "reject", "t1", "--reason", " "}, "--reason is required"},
		{"procedures list --status", []string{"procedures", "list", "--status", "ok"}, `"ok" is not "", succeeded or failed`},
		{"capture --dialect", []string{"capture", "x.star", "--dialect", "python"}, `"python" is not "", starlark or python-async`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runMain(t, tc.args...)
			if code != 2 || !strings.Contains(errOut, tc.want) || (strings.Contains(tc.want, " is not ") && !strings.Contains(errOut, "for flag --")) {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit 2 and %q", code, errOut, tc.want)
			}
		})
	}
}
