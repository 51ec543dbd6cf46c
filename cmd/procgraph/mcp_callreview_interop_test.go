package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
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

// TestMCPInteropReviewAtCallStale: an answer given in an MCP client to
// the call it was shown never answers another. The official Python SDK
// at 2026-07-28 is asked to review record_note; before it answers, the
// call is approved elsewhere and the run goes on to pause at kill_job.
// The client's approval (its genuine requestState) is then refused
// (call_changed): kill_job, whose arguments it never saw, does not run.
func TestMCPInteropReviewAtCallStale(t *testing.T) {
	t.Parallel()
	argv, missing := pythonClient()
	requireSDK(t, missing)
	up := mustUpstream(t)
	file := filepath.Join(t.TempDir(), "tokens.json")
	reviewer := mustCreateToken(t, file, "reviewer", "read,invoke,grant")
	s := mustServe(t, serverOpts{Upstream: up, TokensFile: file, AllowMutating: true})

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], "review_atcall_stale.py", s.URL+"/mcp/interactive", callReviewBlock)
	cmd.Dir = interopDir
	cmd.Env = append(cmd.Environ(), "MCP_TOKEN="+reviewer)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(stdout)
	var asked struct{ Step, Message string }
	if err := dec.Decode(&asked); err != nil || asked.Step != "asked" || !strings.HasPrefix(asked.Message, "Paused before tools.record_note") {
		_ = cmd.Wait()
		t.Fatalf("the client printed %+v (%v)\n%s", asked, err, stderr.String())
	}
	id := regexp.MustCompile(`Review turn (trn_[0-9a-f]+)\.`).FindStringSubmatch(asked.Message)
	if id == nil {
		t.Fatalf("no turn in the review:\n%s", asked.Message)
	}
	// Elsewhere: the call is approved and the run goes on to kill_job.
	var appr struct {
		Call struct {
			Position   int    `json:"position"`
			ArgsDigest string `json:"args_digest"`
		} `json:"call"`
	}
	tok := reviewer
	s.send(t, req{Method: "GET", Path: "/v1/approvals/" + id[1], Token: &tok}).Into(t, &appr)
	mustStatus(t, s.send(t, req{Method: "POST", Path: "/v1/approvals/" + id[1] + "/resolve", Token: &tok,
		Body: map[string]any{"choice": "run_once", "reason": "elsewhere", "call": map[string]any{"position": appr.Call.Position, "args_digest": appr.Call.ArgsDigest}}}), 200)
	mustStatus(t, s.send(t, req{Method: "POST", Path: "/v1/turns/" + id[1] + "/run", Token: &tok}), 202)
	up.reset()

	if _, err := stdin.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	var answered struct {
		Step          string
		IsError       bool `json:"is_error"`
		Text          string
		InputRequired bool `json:"input_required"`
	}
	if err := dec.Decode(&answered); err != nil {
		_ = cmd.Wait()
		t.Fatalf("the client's answer: %v\n%s", err, stderr.String())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the client failed: %v\n%s", err, stderr.String())
	}
	if answered.Step != "answered" || !answered.IsError || answered.InputRequired || !strings.Contains(answered.Text, "call_changed") {
		t.Fatalf("a stale answer: %+v", answered)
	}
	up.mustSeeNothing(t, "a stale answer")
	var st struct {
		Status string `json:"status"`
		Call   struct {
			Tool string `json:"tool"`
		} `json:"call"`
	}
	s.send(t, req{Method: "GET", Path: "/v1/approvals/" + id[1], Token: &tok}).Into(t, &st)
	if st.Status != "pending" || st.Call.Tool != "kill_job" {
		t.Fatalf("after a stale answer the turn is %+v", st)
	}
}
