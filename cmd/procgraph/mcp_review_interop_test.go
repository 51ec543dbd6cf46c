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

// TestMCPInteropReview: the in-client review of a pending turn with the
// official Python and TypeScript SDKs as the operator's client on a
// session: both connect with initialize at 2025-11-25 (the TypeScript SDK
// knows no later revision; the Python script uses the handshake), are asked
// once by elicitation with the tools named, and their approval runs the
// block once. TestMCPInteropReviewModern is the 2026-07-28 review.
func TestMCPInteropReview(t *testing.T) {
	t.Parallel()
	clients := []struct {
		name   string
		client func() ([]string, string)
		script string
	}{
		{"python", pythonClient, "review.py"},
		{"typescript", typeScriptClient, "review.mjs"},
	}
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			argv, missing := c.client()
			requireSDK(t, missing)
			up := mustUpstream(t)
			file := filepath.Join(t.TempDir(), "tokens.json")
			token := mustCreateToken(t, file, "reviewer", "read,invoke,grant")
			s := mustServe(t, serverOpts{Upstream: up, TokensFile: file, AllowMutating: true})

			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, argv[0], c.script, s.URL+"/mcp/interactive", turnKillCode)
			cmd.Dir = interopDir
			cmd.Env = append(cmd.Environ(), "MCP_TOKEN="+token)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("the client failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
			}
			var got struct {
				Step, Protocol, Text string
				Asked                int
				NamesTool            bool `json:"names_tool"`
				IsError              bool `json:"is_error"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &got); err != nil || got.Step != "review" {
				t.Fatalf("the client printed %s (%v)", stdout.String(), err)
			}
			if got.Protocol != "2025-11-25" || got.Asked != 1 || !got.NamesTool || got.IsError || !strings.Contains(got.Text, "operator_approved") {
				t.Fatalf("review: %+v", got)
			}
			if tools := up.tools(); len(tools) != 1 || tools[0] != "kill_job" {
				t.Fatalf("the upstream saw %v, want one kill_job", tools)
			}
			if e := strings.TrimSpace(stderr.String()); e != "" {
				t.Errorf("the client wrote to stderr:\n%s", e)
			}
		})
	}
}

// TestMCPInteropReviewModern: the in-client review with the official
// Python SDK negotiating 2026-07-28 (the TypeScript SDK, at 1.32.2, knows
// no revision past 2025-11-25: TestMCPInteropReview keeps it on
// elicitation). The review is an input-required result the SDK answers
// through its elicitation callback: approved, the block runs once;
// declined, it is denied; a forged requestState and a replay of the
// genuine one are refused and run nothing (ADR 0028).
func TestMCPInteropReviewModern(t *testing.T) {
	t.Parallel()
	argv, missing := pythonClient()
	requireSDK(t, missing)
	up := mustUpstream(t)
	file := filepath.Join(t.TempDir(), "tokens.json")
	token := mustCreateToken(t, file, "reviewer", "read,invoke,grant")
	s := mustServe(t, serverOpts{Upstream: up, TokensFile: file, AllowMutating: true})

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], "review_modern.py", s.URL+"/mcp/interactive", turnKillCode)
	cmd.Dir = interopDir
	cmd.Env = append(cmd.Environ(), "MCP_TOKEN="+token)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the client failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	type step struct {
		Step, Protocol, Text string
		Asked                int
		NamesTool            bool     `json:"names_tool"`
		IsError              bool     `json:"is_error"`
		InputRequired        bool     `json:"input_required"`
		Requests             []string `json:"requests"`
	}
	steps := map[string]step{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var st step
		if err := json.Unmarshal([]byte(line), &st); err != nil {
			t.Fatalf("the client printed %q (%v)", line, err)
		}
		steps[st.Step] = st
	}
	if got := steps["connect"].Protocol; got != modernMCP {
		t.Fatalf("negotiated %q, want %s:\n%s", got, modernMCP, stdout.String())
	}
	if a := steps["approve"]; a.IsError || a.Asked != 1 || !a.NamesTool || !strings.Contains(a.Text, "operator_approved") {
		t.Fatalf("approve: %+v", a)
	}
	if d := steps["deny"]; !d.IsError || d.Asked != 2 || !strings.HasPrefix(d.Text, "denied") {
		t.Fatalf("deny: %+v", d)
	}
	if f := steps["forged"]; !f.InputRequired || !slices.Equal(f.Requests, []string{"review"}) || !f.IsError || !strings.HasPrefix(f.Text, "invalid_request") {
		t.Fatalf("forged: %+v", f)
	}
	if g := steps["genuine"]; g.IsError || !strings.Contains(g.Text, "operator_approved") {
		t.Fatalf("genuine: %+v", g)
	}
	if r := steps["replayed"]; !r.IsError || !strings.HasPrefix(r.Text, "conflict") {
		t.Fatalf("replayed: %+v", r)
	}
	if tools := up.tools(); len(tools) != 2 || tools[0] != "kill_job" || tools[1] != "kill_job" {
		t.Fatalf("the upstream saw %v, want kill_job twice (the approved review and the genuine answer)", tools)
	}
	if e := strings.TrimSpace(stderr.String()); e != "" {
		t.Errorf("the client wrote to stderr:\n%s", e)
	}
}
