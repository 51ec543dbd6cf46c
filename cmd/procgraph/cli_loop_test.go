package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/internal/buildinfo"
)

// runMainEnv runs the real CLI with env in place of the process
// environment's PROCGRAPH_* and NEO4J_* settings (withEnv), so that tests
// need no t.Setenv and may run in parallel.
func runMainWith(tb testing.TB, env map[string]string, args ...string) (int, string, string) {
	tb.Helper()
	var stdout, stderr bytes.Buffer
	code := runCLI(withEnv(context.Background(), env), args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestTurnWaitAndRun: a turn approved after its submitter stopped waiting
// runs with `turn run`; `turn wait` waits for the operator and runs the
// turn once approved; a rejected one exits 1, a still-pending one 3; not
// on a terminal the wait is announced on one plain line.
func TestTurnWaitAndRun(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	a := mustTurnServer(t, up)
	agent := map[string]string{"PROCGRAPH_URL": a.URL, "PROCGRAPH_TOKEN": a.agent}

	// Approved after the submitter gave up: turn run runs it, once.
	id := a.mustPending(t, killTurn("wait", 1))
	mustStatus(t, a.resolve(t, a.op, id, map[string]any{"choice": "run_once"}), 200)
	code, out, errOut := runMainWith(t, agent, "turn", "run", id)
	if code != 0 || !strings.Contains(out, "succeeded") || !strings.Contains(out, "turn:") {
		t.Fatalf("turn run: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := runMainWith(t, agent, "turn", "run", id); code != 1 || !strings.Contains(errOut, "conflict") {
		t.Fatalf("turn run again: exit %d, stderr %s (want 1, conflict)", code, errOut)
	}

	// turn wait: pending at its timeout exits 3 and says what is next.
	id = a.mustPending(t, killTurn("wait", 2))
	code, out, errOut = runMainWith(t, agent, "turn", "wait", id, "--timeout", "0s")
	if code != 3 || !strings.Contains(out, "status:") || !strings.Contains(out, "pending") || !strings.Contains(out, "procgraph turn wait "+id) {
		t.Fatalf("turn wait on a pending turn: exit %d\n%s%s", code, out, errOut)
	}
	if errOut != "" {
		t.Fatalf("turn wait --timeout 0s announced a wait: %q", errOut)
	}

	// turn wait while the operator approves: it runs the turn.
	done := make(chan struct{})
	var wcode int
	var wout, werr string
	go func() {
		defer close(done)
		wcode, wout, werr = runMainWith(t, agent, "turn", "wait", id, "--timeout", "30s")
	}()
	mustStatus(t, a.resolve(t, a.op, id, map[string]any{"choice": "run_once"}), 200)
	<-done
	if wcode != 0 || !strings.Contains(wout, "succeeded") {
		t.Fatalf("turn wait then approve: exit %d\n%s%s", wcode, wout, werr)
	}
	if want := "procgraph: waiting for an operator to review " + id + "\n"; werr != want {
		t.Fatalf("turn wait off a terminal: stderr %q, want the one plain line %q", werr, want)
	}

	// --no-run leaves an approved turn for turn run; --json is the API's answer.
	id = a.mustPending(t, killTurn("wait", 3))
	mustStatus(t, a.resolve(t, a.op, id, map[string]any{"choice": "run_once"}), 200)
	code, out, _ = runMainWith(t, agent, "turn", "wait", id, "--no-run", "--json", "--timeout", "0s")
	var got struct {
		Turn struct{ ID, Status string } `json:"turn"`
	}
	if code != 3 || json.Unmarshal([]byte(out), &got) != nil || got.Turn.Status != "approved" {
		t.Fatalf("turn wait --no-run --json: exit %d\n%s", code, out)
	}

	// Rejected: exit 1.
	id = a.mustPending(t, killTurn("wait", 4))
	mustStatus(t, a.resolve(t, a.op, id, map[string]any{"choice": "reject"}), 200)
	if code, out, _ := runMainWith(t, agent, "turn", "wait", id); code != 1 || !strings.Contains(out, "rejected") {
		t.Fatalf("turn wait on a rejected turn: exit %d\n%s", code, out)
	}
	if got := up.tools(); len(got) != 2 {
		t.Fatalf("upstream saw %v, want the two approved runs", got)
	}
}

// TestProceduresListSearch: --q is the API's relevance search.
func TestProceduresListSearch(t *testing.T) {
	t.Parallel()
	s := mustServe(t, serverOpts{Upstream: mustUpstream(t)})
	name := mustCaptureName(t, s, readOnlyCode, "q")
	env := map[string]string{"PROCGRAPH_URL": s.URL}
	code, out, errOut := runMainWith(t, env, "procedures", "list", "--q", "jobs summary")
	if code != 0 || !strings.Contains(out, name) || !strings.Contains(out, "1 of 1") {
		t.Fatalf("procedures list --q: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runMainWith(t, env, "procedures", "list", "--q", "zzzunrelatedzzz")
	if code != 0 || strings.Contains(out, name) || !strings.Contains(out, "0 of 0") {
		t.Fatalf("procedures list --q with no match: exit %d\n%s", code, out)
	}
}

// TestVersion: version and --version print the build's release and VCS
// stamp; --json has the fields.
func TestVersion(t *testing.T) {
	t.Parallel()
	want := buildinfo.Read().String() + "\n"
	for _, args := range [][]string{{"version"}, {"--version"}} {
		if code, out, errOut := runMainWith(t, nil, args...); code != 0 || out != want || errOut != "" {
			t.Fatalf("%q: exit %d, %q %q, want %q", args, code, out, errOut, want)
		}
	}
	code, out, _ := runMainWith(t, nil, "version", "--json")
	var in buildinfo.Info
	if code != 0 || json.Unmarshal([]byte(out), &in) != nil || in.Version == "" || in.Module != "github.com/procgraph/procgraph" {
		t.Fatalf("version --json: exit %d\n%s", code, out)
	}
}

// TestDidYouMean: a mistyped command, subcommand or flag is answered with
// the nearest one; something near nothing gets no guess.
func TestDidYouMean(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args []string
		want string // "" for no suggestion
	}{
		{"command", []string{"doctr"}, "did you mean procgraph doctor?"},
		{"two-word command", []string{"aprovals", "list"}, "did you mean procgraph approvals list?"},
		{"subcommand", []string{"procedures", "lst"}, "did you mean procgraph procedures list?"},
		{"flag", []string{"procedures", "list", "--lmit", "3"}, "did you mean --limit?"},
		{"serve's setting", []string{"serve", "--adr", "x"}, "did you mean --addr?"},
		{"turn wait's flag", []string{"turn", "wait", "trn_x", "--timout", "1s"}, "did you mean --timeout?"},
		{"nothing near", []string{"qqqqqqqq"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := runMainWith(t, nil, c.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2: %s", code, errOut)
			}
			if c.want == "" {
				if strings.Contains(errOut, "did you mean") {
					t.Fatalf("a guess for %q: %s", c.args, errOut)
				}
				return
			}
			if !strings.Contains(errOut, c.want) {
				t.Fatalf("stderr %q lacks %q", errOut, c.want)
			}
		})
	}
}

// TestJSONErrorsHaveLineAndColumn: a catalogue or tokens file that is not
// JSON is reported with the line and column of the mistake.
func TestJSONErrorsHaveLineAndColumn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := fileWriter(t, dir)
	bad := write("tools.json", "{\"tools\": [\n  {\"name\": \"a\", \"read_only\": true},\n  {\"name\": \"b\" \"read_only\": true}\n]}\n")
	code, _, errOut := runMainWith(t, nil, "signature", "--tools", bad, write("p.star", "return tools.a()\n"))
	if code == 0 || !strings.Contains(errOut, "line 3, column 16") {
		t.Fatalf("signature with a broken catalogue: exit %d, %s", code, errOut)
	}
	tokens := write("tokens.json", "{\"tokens\": [\n  {\"name\": \"a\", \"sha256\": 7}\n]}\n")
	// No server answers (doctor would check it, not this tokens file).
	code, out, _ := runMainWith(t, map[string]string{"PROCGRAPH_URL": "http://127.0.0.1:1"}, "doctor", "--data", filepath.Join(dir, "p.db"), "--tokens-file", tokens)
	if code != 1 || !regexp.MustCompile(`(?m)^FAIL\s+auth\s+.*line 2, column \d+`).MatchString(out) {
		t.Fatalf("doctor with a broken tokens file: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "p.db")); err == nil {
		t.Fatal("doctor created the store file")
	}
}

// TestDidYouMeanNames: a procedure or tool name the server does not know
// is answered with the nearest one it does.
func TestDidYouMeanNames(t *testing.T) {
	t.Parallel()
	s := mustServe(t, serverOpts{Upstream: mustUpstream(t)})
	name := mustCaptureName(t, s, readOnlyCode, "n")
	env := map[string]string{"PROCGRAPH_URL": s.URL}
	typo := name[:len(name)-1] + "x"
	for _, args := range [][]string{{"procedures", "show", typo}, {"invoke", typo, "--phase", "automatic"}} {
		code, _, errOut := runMainWith(t, env, args...)
		if code != 1 || !strings.Contains(errOut, "not_found") || !strings.Contains(errOut, "suggestion: did you mean "+name+"?") {
			t.Fatalf("%q: exit %d, stderr %s", args, code, errOut)
		}
	}
	code, out, errOut := runMainWith(t, env, "procedures", "list", "--tool", "get_task_jobs_sumary")
	if code != 0 || !strings.Contains(out, "0 of 0") ||
		errOut != "procgraph: no tool \"get_task_jobs_sumary\" in the catalogue; did you mean get_task_jobs_summary?\n" {
		t.Fatalf("procedures list --tool with a typo: exit %d, stdout %s, stderr %q", code, out, errOut)
	}
	if code, _, errOut := runMainWith(t, env, "procedures", "show", "zzzzzzzzzzzzzzzz"); code != 1 || strings.Contains(errOut, "did you mean") {
		t.Fatalf("a name near none: exit %d, stderr %s", code, errOut)
	}
}
