package main

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callTool calls tool on sess and returns its result (a protocol error
// fails the test).
func callTool(t *testing.T, sess *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// mcpListedFor is what tools/list offers each token of mustTurnServer on
// path (besides proc: the exposed procedure's tool, offered to whoever may
// invoke): the tools its scopes let it call, and nothing else.
func mcpListedFor(path, proc string) map[string][]string {
	agent := []string{"find_all_procedures", "run_code", proc}
	if path == "/mcp/interactive" {
		agent = append(agent, "await_approval")
	}
	slices.Sort(agent)
	op := []string{"find_all_procedures", "set_procedure_auto_run"} // read, grant
	return map[string][]string{"agent": agent, "op": op, "viewer": {"find_all_procedures"}}
}

// TestMCPListsOnlyWhatTheCallerMayCall: tools/list on both MCP endpoints,
// on a session (2025-11-25) and statelessly (2026-07-28), offers a token
// only the tools its scopes let it call: the agent token (read, invoke,
// capture) is not offered set_procedure_auto_run, which needs grant; a
// read-only token is offered no proc__ tool and no run_code; the
// operator's read,grant token is offered set_procedure_auto_run and no
// tool that needs invoke.
func TestMCPListsOnlyWhatTheCallerMayCall(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	a := mustTurnServer(t, up)
	proc := mustCaptureName(t, a.server, "a = tools.get_task_jobs_summary(task_id=task_id)\nb = tools.get_retry_chain(task_id=task_id)\nreturn [a, b]\n", "l1")
	tokens := map[string]string{"agent": a.agent, "op": a.op, "viewer": a.viewer}
	for _, path := range []string{"/mcp", "/mcp/interactive"} {
		want := mcpListedFor(path, proc)
		for _, revision := range []string{legacyMCP, modernMCP} {
			for holder, token := range tokens {
				got := slices.Sorted(maps.Keys(mcpToolNames(t, mustMCPAt(t, a.server, path, token, nil, revision))))
				if !slices.Equal(got, want[holder]) {
					t.Errorf("%s at %s lists %v to %s, want %v", path, revision, got, holder, want[holder])
				}
			}
		}
	}
	// What is not listed is still refused when called by name.
	sess := mustMCPAt(t, a.server, "/mcp", a.agent, nil, modernMCP)
	res := callTool(t, sess, "set_procedure_auto_run", map[string]any{"name": proc, "enabled": true, "reason": "me"})
	if !res.IsError || !strings.HasPrefix(mcpText(res), "forbidden") {
		t.Fatalf("the agent called set_procedure_auto_run: %s", mcpText(res))
	}
	if ds := a.decisions(t, "kind=grant"); len(ds) != 0 {
		t.Fatalf("grant decisions %v", ds)
	}
}

// TestMCPInteropListsWhatTheCallerMayCall: the official Python SDK, on a
// session and at 2026-07-28, is offered only the tools its token may call
// on both endpoints, as a list no one else may cache ("private").
func TestMCPInteropListsWhatTheCallerMayCall(t *testing.T) {
	t.Parallel()
	argv, missing := pythonClient()
	requireSDK(t, missing)
	up := mustUpstream(t)
	a := mustTurnServer(t, up)
	proc := mustCaptureName(t, a.server, "a = tools.get_task_jobs_summary(task_id=task_id)\nb = tools.get_retry_chain(task_id=task_id)\nreturn [a, b]\n", "l1")
	for _, path := range []string{"/mcp", "/mcp/interactive"} {
		want := mcpListedFor(path, proc)
		for holder, token := range map[string]string{"agent": a.agent, "op": a.op} {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			cmd := exec.CommandContext(ctx, argv[0], "list.py", a.URL+path)
			cmd.Dir = interopDir
			cmd.Env = append(cmd.Environ(), "MCP_TOKEN="+token)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			cancel()
			if err != nil {
				t.Fatalf("the client failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
			}
			revisions := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
				var st struct {
					Step, Protocol string
					Tools          []string
					CacheScope     *string `json:"cache_scope"`
				}
				if err := json.Unmarshal([]byte(line), &st); err != nil {
					t.Fatalf("the client printed %q (%v)", line, err)
				}
				revisions[st.Step] = st.Protocol
				if !slices.Equal(st.Tools, want[holder]) {
					t.Errorf("%s (%s, %s) lists %v to %s, want %v", path, st.Step, st.Protocol, st.Tools, holder, want[holder])
				}
				if st.Step == "modern" && (st.CacheScope == nil || *st.CacheScope != "private") {
					t.Errorf("%s at %s: the list's cache scope is not private: %s", path, st.Protocol, line)
				}
			}
			if revisions["session"] != legacyMCP || revisions["modern"] != modernMCP {
				t.Fatalf("negotiated %v\n%s", revisions, stdout.String())
			}
			if e := strings.TrimSpace(stderr.String()); e != "" {
				t.Errorf("the client wrote to stderr:\n%s", e)
			}
		}
	}
}
