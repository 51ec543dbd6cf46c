package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// terminal is one command running in a real terminal: a detached tmux
// session of its own server (200x50), read with capture-pane while it
// runs.
type terminal struct {
	t    *testing.T
	tmux string
	sock string
}

// startTerminal starts argv with env in a terminal; it is killed at
// cleanup.
func startTerminal(t *testing.T, env []string, argv ...string) *terminal {
	t.Helper()
	term := &terminal{t: t, tmux: requireCommand(t, "tmux", "apt-get install tmux"),
		sock: fmt.Sprintf("procgraph-term-%d-%d", os.Getpid(), time.Now().UnixNano())}
	t.Cleanup(func() { _ = exec.Command(term.tmux, "-L", term.sock, "kill-server").Run() })
	shell := "env"
	for _, s := range append(env, argv...) {
		shell += " " + shellQuote(s)
	}
	term.run("start-server", ";", "set-option", "-g", "remain-on-exit", "on", ";", "set-option", "-g", "status", "off", ";",
		"new-session", "-d", "-s", "t", "-x", "200", "-y", "50", shell)
	return term
}

func (term *terminal) run(args ...string) string {
	term.t.Helper()
	out, err := exec.Command(term.tmux, append([]string{"-L", term.sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
	if err != nil {
		term.t.Fatalf("tmux %q: %v\n%s", args, err, out)
	}
	return string(out)
}

// screen is what the terminal shows now.
func (term *terminal) screen() string { return term.run("capture-pane", "-p", "-t", "t") }

// waitFor waits until the screen matches pattern and returns it.
func (term *terminal) waitFor(pattern string) string {
	term.t.Helper()
	re := regexp.MustCompile(pattern)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		s := term.screen()
		if re.MatchString(s) {
			return s
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("the terminal never showed %s:\n%s", pattern, s)
		}
	}
}

// waitExit waits until the command exited and returns the final screen.
func (term *terminal) waitExit() string {
	term.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); strings.TrimSpace(term.run("display-message", "-p", "-t", "t", "#{pane_dead}")) != "1"; {
		if time.Now().After(deadline) {
			term.t.Fatalf("the command did not exit:\n%s", term.screen())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// With the history: tmux scrolls a dead pane's screen by a line.
	return term.run("capture-pane", "-p", "-S", "-", "-t", "t")
}

// TestProgressLineInATerminal: `turn wait` in a real terminal shows one
// progress line, redrawn in place with the time waited, and clears it
// when the operator answers and the turn has run.
func TestProgressLineInATerminal(t *testing.T) {
	t.Parallel()
	a := mustTurnServer(t, mustUpstream(t))
	id := a.mustPending(t, killTurn("tty", 1))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	term := startTerminal(t, []string{runMainEnv + "=1", "PROCGRAPH_URL=" + a.URL, "PROCGRAPH_TOKEN=" + a.agent, "TERM=xterm"},
		exe, "turn", "wait", id, "--timeout", "60s")
	screen := term.waitFor(`waiting for an operator to review ` + id + `… [1-9]\d*s`)
	t.Logf("while waiting:\n%s", screen)
	if n := strings.Count(screen, "waiting for an operator"); n != 1 {
		t.Fatalf("the progress line shows %d times (want once, redrawn in place):\n%s", n, screen)
	}
	mustStatus(t, a.resolve(t, a.op, id, map[string]any{"choice": "run_once"}), 200)
	screen = term.waitExit()
	t.Logf("after the run:\n%s", screen)
	if strings.Contains(screen, "waiting for an operator") {
		t.Fatalf("the progress line was not cleared:\n%s", screen)
	}
	mustMatchLines(t, screen, `^turn:\s+`+id+`$`, `^status:\s+succeeded$`)

	// turn --wait --json: the line is cleared before the JSON is printed,
	// so none of the JSON is erased.
	file := filepath.Join(t.TempDir(), "kill.star")
	if err := os.WriteFile(file, []byte(turnKillCode+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	term = startTerminal(t, []string{runMainEnv + "=1", "PROCGRAPH_URL=" + a.URL, "PROCGRAPH_TOKEN=" + a.agent, "TERM=xterm"},
		exe, "turn", file, "--session", "tty2", "--phase", "interactive", "--arg", "panda_id=2", "--wait", "60s", "--json")
	// The turn's id first, on its own line, then the progress line.
	screen = term.waitFor(`waiting for an operator to review trn_\w+… \d+s`)
	m := regexp.MustCompile(`(?m)^turn (trn_\w+): pending; waiting up to 1m0s for an operator \(procgraph turn wait trn_\w+ waits again\)$`).FindStringSubmatch(screen)
	if m == nil {
		t.Fatalf("turn --wait does not print the turn's id first:\n%s", screen)
	}
	mustStatus(t, a.resolve(t, a.op, m[1], map[string]any{"choice": "run_once"}), 200)
	screen = term.waitExit()
	t.Logf("turn --wait --json after the run:\n%s", screen)
	text, _, _ := strings.Cut(screen, "Pane is dead")
	_, text, _ = strings.Cut(text, "waits again)\n")
	text = strings.TrimSpace(text)
	var answer struct {
		Status string `json:"status"`
	}
	if strings.Contains(screen, "waiting for an operator to review") || json.Unmarshal([]byte(text), &answer) != nil || answer.Status != "succeeded" {
		t.Fatalf("the terminal does not show the whole JSON answer alone:\n%s", screen)
	}
}

// TestTextLogsInATerminal: serve on a terminal logs one readable line per
// record (zerolog's ConsoleWriter) with the console URL at start; off a
// terminal, JSON; --log-format overrides either.
func TestTextLogsInATerminal(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "p.db")
	term := startTerminal(t, []string{runMainEnv + "=1", "TERM=xterm"},
		exe, "serve", "--addr", "127.0.0.1:0", "--data", data, "--auth", "off", "--sandbox-workers", "1")
	screen := term.waitFor(`listening`)
	t.Logf("serve in a terminal:\n%s", screen)
	mustMatchLines(t, screen, `^\d\d:\d\d:\d\d INF listening addr=http://127\.0\.0\.1:\d+ .*console=http://127\.0\.0\.1:\d+/ui/`)
	if strings.Contains(screen, `{"level"`) {
		t.Fatalf("JSON logs on a terminal:\n%s", screen)
	}

	cases := []struct {
		name, format string
		want         string
	}{
		{"not a terminal", "", `(?m)^\{"level":"info",.*"console":"http://127\.0\.0\.1:\d+/ui/".*"message":"listening"\}$`},
		{"text asked for", "text", `(?m)^\d\d:\d\d:\d\d INF listening addr=`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"serve", "--addr", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "p.db"), "--auth", "off", "--sandbox-workers", "1"}
			if c.format != "" {
				args = append(args, "--log-format", c.format)
			}
			logs := &logSink{}
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			wg.Go(func() { runCLI(ctx, args, strings.NewReader(""), &logSink{}, logs) })
			for deadline := time.Now().Add(30 * time.Second); !strings.Contains(logs.String(), "listening"); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("serve never listened:\n%s", logs)
				}
			}
			cancel()
			wg.Wait()
			if !regexp.MustCompile(c.want).MatchString(logs.String()) {
				t.Fatalf("logs do not match %s:\n%s", c.want, logs)
			}
		})
	}
}

// TestFatalErrorOnce: serve's fatal error is printed once: the record in
// JSON logs, the plain line with text logs.
func TestFatalErrorOnce(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "none.json")
	for _, format := range []string{"json", "text"} {
		t.Run(format, func(t *testing.T) {
			code, _, errOut := runMainWith(t, nil, "serve", "--addr", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "p.db"),
				"--auth", "off", "--tools", missing, "--log-format", format)
			if code != 1 || strings.Count(errOut, "none.json") != 1 {
				t.Fatalf("exit %d; the error shows %d times, want once:\n%s", code, strings.Count(errOut, "none.json"), errOut)
			}
			if format == "text" && !strings.Contains(errOut, "procgraph serve: --tools / PROCGRAPH_TOOLS: ") {
				t.Fatalf("text: no plain line:\n%s", errOut)
			}
		})
	}
}
