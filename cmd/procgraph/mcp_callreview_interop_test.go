package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// callReviewBlock reads (a hostile answer: the upstream echoes the query,
// an escape sequence, HTML and a bidirectional override), writes a note
// with what it read, reads a job and kills it: two state-changing calls,
// each with arguments only the run knows (the note's text, panda_id 101
// from the summary).
const callReviewBlock = "n = tools.search_panda_docs(query=\"\\x1b[2J<img src=x onerror=window.pwned=1>\\u202eevil\")\n" +
	"tools.record_note(text=n[\"args\"][\"query\"])\n" +
	"s = tools.get_task_jobs_summary(task_id=1)\n" +
	"tools.kill_job(panda_id=s[\"tasks\"][0][\"task_id\"])\n" +
	"return \"done\"\n"

// callReviewAnswer is what an interop client of review_atcall printed.
type callReviewAnswer struct {
	Protocol string   `json:"protocol"`
	Asked    []string `json:"asked"`
	IsError  bool     `json:"is_error"`
	Text     string   `json:"text"`
}

// runCallReviewClient runs an interop script against url with token and
// returns what it printed.
func runCallReviewClient(t *testing.T, argv []string, token string, args ...string) callReviewAnswer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], args...)
	cmd.Dir = interopDir
	cmd.Env = append(cmd.Environ(), "MCP_TOKEN="+token)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the client failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if e := strings.TrimSpace(stderr.String()); e != "" {
		t.Errorf("the client wrote to stderr:\n%s", e)
	}
	var got callReviewAnswer
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("the client printed %s (%v)", stdout.String(), err)
	}
	return got
}

// TestMCPInteropReviewAtCall: run_code with review "at_call" through the
// official SDKs — the Python SDK at 2025-11-25 (elicitation) and
// 2026-07-28 (input-required, asked again at the next call), the
// TypeScript SDK at 2025-11-25 (elicitation). The block's reads run at
// once; the operator is asked twice, each time for the call the run
// reached, shown first with its real arguments (the note's hostile text
// as escapes, never raw; panda_id 101, which only the run knew), the
// reads before it and the code with its line marked; each approval runs
// exactly that call, once. A client without the grant scope is never
// asked: the answer names the paused call and holds no argument value,
// and nothing state-changing runs.
func TestMCPInteropReviewAtCall(t *testing.T) {
	t.Parallel()
	clients := []struct {
		name, revision, protocol string
		client                   func() ([]string, string)
		script                   string
	}{
		{"python-elicitation", "legacy", "2025-11-25", pythonClient, "review_atcall.py"},
		{"python-input-required", "modern", "2026-07-28", pythonClient, "review_atcall.py"},
		{"typescript-elicitation", "", "2025-11-25", typeScriptClient, "review_atcall.mjs"},
	}
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			argv, missing := c.client()
			requireSDK(t, missing)
			up := mustUpstream(t)
			file := filepath.Join(t.TempDir(), "tokens.json")
			reviewer := mustCreateToken(t, file, "reviewer", "read,invoke,grant")
			agent := mustCreateToken(t, file, "agent", "read,invoke")
			s := mustServe(t, serverOpts{Upstream: up, TokensFile: file, AllowMutating: true})
			url := s.URL + "/mcp/interactive"
			args := []string{c.script, url, callReviewBlock}
			if c.revision != "" {
				args = append(args, c.revision)
			}

			got := runCallReviewClient(t, argv, reviewer, args...)
			t.Logf("asked:\n%s", strings.Join(got.Asked, "\n----\n"))
			if got.Protocol != c.protocol || got.IsError || len(got.Asked) != 2 || !strings.Contains(got.Text, "succeeded") {
				t.Fatalf("review at the call: %+v", got)
			}
			first, second := got.Asked[0], got.Asked[1]
			for _, want := range []string{"Paused before tools.record_note (call 2, line 2)",
				`Its arguments (as evaluated): {"text":"\u001b[2J<img src=x onerror=window.pwned=1>\u202eevil"}`,
				"1. tools.search_panda_docs", "> 2  tools.record_note("} {
				if !strings.Contains(first, want) {
					t.Fatalf("the first review lacks %q:\n%s", want, first)
				}
			}
			if !strings.HasPrefix(first, "Paused before tools.record_note") || !strings.HasPrefix(second, "Paused before tools.kill_job (call 4, line 4)") ||
				!strings.Contains(second, `Its arguments (as evaluated): {"panda_id":101}`) || !strings.Contains(second, "> 4  tools.kill_job(") {
				t.Fatalf("the reviews do not show their call first:\n%s\n----\n%s", first, second)
			}
			for _, m := range got.Asked {
				if strings.ContainsAny(m, "\x1b\u202e") {
					t.Fatalf("a review shows a hidden character raw: %q", m)
				}
			}
			want := []string{"search_panda_docs", "record_note", "get_task_jobs_summary", "kill_job"}
			if tools := up.tools(); !slices.Equal(tools, want) {
				t.Fatalf("the upstream saw %v, want each of %v once", tools, want)
			}
			for _, call := range up.calls {
				if call.Tool == "kill_job" && call.Args["panda_id"] != float64(101) {
					t.Fatalf("kill_job ran with %v", call.Args)
				}
			}

			up.reset()
			got = runCallReviewClient(t, argv, agent, args...)
			if len(got.Asked) != 0 || !strings.Contains(got.Text, "paused before tools.record_note (call 2)") ||
				strings.Contains(got.Text, "evil") || strings.Contains(got.Text, "img") {
				t.Fatalf("a client without the grant scope: %+v", got)
			}
			if tools := up.tools(); !slices.Equal(tools, []string{"search_panda_docs"}) {
				t.Fatalf("without the grant scope the upstream saw %v, want the read only", tools)
			}
		})
	}
}
