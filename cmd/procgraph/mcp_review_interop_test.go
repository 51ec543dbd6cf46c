package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMCPInteropReview: the in-client review of a pending turn with the
// official Python and TypeScript SDKs as the operator's client. Both
// negotiate 2025-11-25 (ADR 0023), are asked once by elicitation with the
// tools named, and their approval runs the block once.
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
