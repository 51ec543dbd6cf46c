package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRetireCommands: procgraph retire and unretire through Main against a
// live server with tokens: admin scope only, a reason required, the
// procedure hidden and its invoke denied (no tool reached), then back.
func TestRetireCommands(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.json")
	root := mustCreateToken(t, tokens, "root", "read,capture,invoke,grant,admin")
	granter := mustCreateToken(t, tokens, "granter", "read,capture,invoke,grant")
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up, TokensFile: tokens})
	t.Setenv("PROCGRAPH_URL", s.URL)
	t.Setenv("PROCGRAPH_TOKEN", root)
	file := filepath.Join(dir, "ro.star")
	if err := os.WriteFile(file, []byte(readOnlyCode), 0o600); err != nil {
		t.Fatal(err)
	}
	var cap struct{ Procedure map[string]any }
	mustRunJSON(t, &cap, "capture", file, "--json")

	t.Setenv("PROCGRAPH_TOKEN", granter)
	code, _, errOut := runMain(t, "retire", readOnlyName, "--reason", "x")
	if code != 1 || !strings.Contains(errOut, "403") || !strings.Contains(errOut, "admin") {
		t.Fatalf("retire without the admin scope: exit %d, %s", code, errOut)
	}
	t.Setenv("PROCGRAPH_TOKEN", root)
	code, _, errOut = runMain(t, "retire", readOnlyName)
	if code != 1 || !strings.Contains(errOut, "400") || !strings.Contains(errOut, "reason") {
		t.Fatalf("retire without a reason: exit %d, %s", code, errOut)
	}

	var ans struct {
		Procedure map[string]any
		Decision  map[string]any
	}
	mustRunJSON(t, &ans, "retire", readOnlyName, "--reason", "superseded", "--json")
	if ans.Decision["kind"] != "retire" || ans.Decision["reason"] != "retired" || ans.Decision["actor"] != "root" || ans.Procedure["exposed"] != false {
		t.Fatalf("retire answered %+v", ans)
	}
	code, out, _ := runMain(t, "procedures", "show", readOnlyName)
	if code != 0 || !strings.Contains(out, "retired") || !strings.Contains(out, "by root") || !strings.Contains(out, "superseded") {
		t.Fatalf("procedures show: exit %d\n%s", code, out)
	}
	code, _, errOut = runMain(t, "invoke", readOnlyName, "--phase", "automatic", "--arg", "task_id=1")
	if code != 1 || !strings.Contains(errOut, "denied") || !strings.Contains(errOut, "retired") {
		t.Fatalf("invoke of a retired procedure: exit %d, %s", code, errOut)
	}
	up.mustSeeNothing(t, "an invoke of a retired procedure")

	mustRunJSON(t, &ans, "unretire", readOnlyName, "--json")
	if ans.Decision["reason"] != "unretired" || ans.Procedure["retired"] != nil || ans.Procedure["exposed"] != true {
		t.Fatalf("unretire answered %+v", ans)
	}
	if code, _, errOut := runMain(t, "invoke", readOnlyName, "--phase", "automatic", "--arg", "task_id=1"); code != 0 {
		t.Fatalf("invoke after unretire: exit %d, %s", code, errOut)
	}
	var ds struct{ Decisions []map[string]any }
	mustRunJSON(t, &ds, "decisions", "--kind", "retire", "--json")
	if len(ds.Decisions) != 2 {
		t.Fatalf("retire decisions: %+v", ds.Decisions)
	}
}

// TestRetiredHiddenFromMCP: a retired procedure leaves MCP's tools/list and
// the planner view; calling it is an unknown tool and reaches nothing.
func TestRetiredHiddenFromMCP(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up})
	name := mustCaptureName(t, s, readOnlyCode, "m1")
	sess := mustMCPClient(t, s, "/mcp", nil)
	if tools := mcpToolNames(t, sess); tools[name] == nil {
		t.Fatalf("/mcp does not list %s before it is retired", name)
	}
	mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/procedures/" + name + "/retirement", Body: map[string]any{"reason": "gone"}}), 200)
	if tools := mcpToolNames(t, sess); tools[name] != nil {
		t.Fatalf("/mcp lists %s after it was retired", name)
	}
	var view struct{ Tools []map[string]any }
	r := s.get(t, "/v1/procedures/tools")
	mustStatus(t, r, 200)
	r.Into(t, &view)
	if len(view.Tools) != 0 {
		t.Fatalf("the planner view lists %v", view.Tools)
	}
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"task_id": 7}})
	if err == nil && !res.IsError {
		t.Fatalf("calling a retired procedure over MCP succeeded: %q", mcpText(res))
	}
	up.mustSeeNothing(t, "a retired procedure called over MCP")
}
