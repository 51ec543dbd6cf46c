package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mustMCPClient connects the SDK's client to path on s, with s's default
// token.
func mustMCPClient(t *testing.T, s *server, path string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return mustMCPAs(t, s, path, s.token, opts)
}

// mustMCPAs connects the SDK's client to path on s with token ("" for none),
// at the newest revision both serve (2026-07-28: stateless).
func mustMCPAs(t *testing.T, s *server, path, token string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return mustMCPAt(t, s, path, token, opts, "")
}

// The MCP revisions the tests name: the newest (stateless) and the last
// with sessions.
const (
	modernMCP = "2026-07-28"
	legacyMCP = "2025-11-25"
)

// mustMCPAt is mustMCPAs asking for revision ("": the SDK's newest).
func mustMCPAt(t *testing.T, s *server, path, token string, opts *mcp.ClientOptions, revision string) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: s.URL + path}
	if token != "" {
		tr.HTTPClient = &http.Client{Transport: bearer{token}}
	}
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "secure", Version: "v1"}, opts).Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: revision})
	if err != nil {
		t.Fatalf("connect %s: %v", path, err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

func mcpToolNames(t *testing.T, sess *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	res, err := sess.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		out[tool.Name] = tool
	}
	return out
}

func mcpText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestMCPServedByMain: an MCP client sees the exposed procedures of the real
// server as tools, replays them through the same decisions and sandbox, is
// denied state-changing ones on /mcp with nothing reaching the upstream, and
// is told when the exposed set changes.
func TestMCPServedByMain(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up, AllowMutating: true})
	readOnly := mustCaptureName(t, s, "a = tools.get_task_jobs_summary(task_id=task_id)\nb = tools.get_retry_chain(task_id=task_id)\nreturn [a, b]\n", "m1")
	mutating := mustCaptureName(t, s, "a = tools.get_task_jobs_summary(task_id=task_id)\ntools.retry_task(task_id=task_id)\nreturn a\n", "m2")

	changed := make(chan struct{}, 8)
	sess := mustMCPClient(t, s, "/mcp", &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	tools := mcpToolNames(t, sess)
	for _, name := range []string{"find_all_procedures", readOnly, mutating} {
		if tools[name] == nil {
			t.Fatalf("tool %s not listed; got %v", name, tools)
		}
	}
	if a := tools[readOnly].Annotations; a == nil || !a.ReadOnlyHint {
		t.Fatalf("%s must carry readOnlyHint", readOnly)
	}
	if a := tools[mutating].Annotations; a != nil && a.ReadOnlyHint {
		t.Fatalf("%s changes state: no readOnlyHint", mutating)
	}

	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: readOnly, Arguments: map[string]any{"task_id": 7}})
	if err != nil || res.IsError {
		t.Fatalf("read-only call: %v %s", err, mcpText(res))
	}
	if got := strings.Join(up.tools(), ","); got != "get_task_jobs_summary,get_retry_chain" {
		t.Fatalf("upstream saw %q", got)
	}

	up.reset()
	res, err = sess.CallTool(context.Background(), &mcp.CallToolParams{Name: mutating, Arguments: map[string]any{"task_id": 7}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(mcpText(res), "state_changing_in_automatic_phase") {
		t.Fatalf("a state-changing call on /mcp must be a denial: %s", mcpText(res))
	}
	up.mustSeeNothing(t, "a denied MCP call")
	if ds := s.decisions(t, "procedure="+mutating); len(ds) != 1 || ds[0]["outcome"] != "denied" {
		t.Fatalf("the MCP denial must be audited once: %v", ds)
	}
	// MCP decisions and runs are counted by the one recorder, as HTTP's are.
	metrics := string(s.send(t, req{Method: "GET", Path: "/metrics"}).Body)
	for _, want := range []string{
		`procgraph_decisions_total{kind="invoke",outcome="allowed",reason="read_only"} 1`,
		`procgraph_decisions_total{kind="invoke",outcome="denied",reason="state_changing_in_automatic_phase"} 1`,
		`procgraph_replays_total{error="",status="succeeded"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}

	// A capture over HTTP changes the exposed set: the MCP client is told.
	for len(changed) > 0 {
		<-changed
	}
	added := mustCaptureName(t, s, "a = tools.get_task_input_datasets(task_id=task_id)\nreturn [a, tools.fetch_brokerage_context(task_id=task_id)]\n", "m3")
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatal("no notifications/tools/list_changed after a capture")
	}
	if mcpToolNames(t, sess)[added] == nil {
		t.Fatalf("%s not listed after the change", added)
	}
}

// buildMCPServer builds the stdio MCP test server of mcpdispatch.
func buildMCPServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcpserver")
	out, err := exec.Command("go", "build", "-o", bin, "../../mcpdispatch/testdata/mcpserver").CombinedOutput()
	if err != nil {
		t.Fatalf("go build mcpserver: %v\n%s", err, out)
	}
	return bin
}

// TestUpstreamMCPCommandThroughMain: `tools import` builds a catalogue from
// an MCP server over stdio, and serve --upstream-mcp-command replays against
// it; a refused call never reaches it.
func TestUpstreamMCPCommandThroughMain(t *testing.T) {
	bin := buildMCPServer(t)
	record := filepath.Join(t.TempDir(), "calls.jsonl")
	t.Setenv("MCPTEST_RECORD", record)

	var stdout, stderr bytes.Buffer
	if code := runCLI(context.Background(), []string{"tools", "import", "--from-mcp-command", bin, "--trust-annotations"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("tools import: exit %d: %s", code, stderr.String())
	}
	var cat struct {
		Tools []struct {
			Name     string `json:"name"`
			ReadOnly bool   `json:"read_only"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &cat); err != nil {
		t.Fatalf("tools import printed no catalogue: %v\n%s", err, stdout.String())
	}
	readOnly := map[string]bool{}
	for _, tool := range cat.Tools {
		readOnly[tool.Name] = tool.ReadOnly
	}
	if !readOnly["get_jobs"] || readOnly["kill_job"] {
		t.Fatalf("imported read_only flags: %v", readOnly)
	}
	catFile := filepath.Join(t.TempDir(), "catalogue.json")
	if err := os.WriteFile(catFile, stdout.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	s := mustServe(t, serverOpts{NoCatalogue: true, Extra: []string{"--tools", catFile, "--upstream-mcp-command", bin}})
	name := mustCaptureName(t, s, "a = tools.get_jobs(task_id=task_id)\nb = tools.fetch_logs(task_id=task_id)\nreturn [a, b]\n", "u1")
	out := mustStatus(t, s.invoke(t, name, map[string]any{"arguments": map[string]any{"task_id": 3}, "phase": "automatic"}), 200)
	if out["status"] != "succeeded" {
		t.Fatalf("replay over MCP stdio: %v", out)
	}
	result := out["result"].([]any)
	if jobs := result[0].(map[string]any)["jobs"]; len(jobs.([]any)) != 2 {
		t.Fatalf("structured content lost: %v", result)
	}

	escape := mustCaptureName(t, s, "t = tools\nt.kill_job(task_id=1)\nreturn tools.get_jobs(task_id=task_id)\n", "u2")
	out = mustStatus(t, s.invoke(t, escape, map[string]any{"arguments": map[string]any{"task_id": 3}, "phase": "automatic"}), 200)
	if e, _ := out["error"].(map[string]any); out["status"] != "failed" || e["code"] != "tool_refused" {
		t.Fatalf("the aliased kill_job must be refused: %v", out)
	}
	data, _ := os.ReadFile(record)
	if strings.Contains(string(data), `"kill_job"`) {
		t.Fatalf("a refused call reached the upstream MCP server:\n%s", data)
	}
	if !strings.Contains(string(data), `"get_jobs"`) || !strings.Contains(string(data), `"fetch_logs"`) {
		t.Fatalf("the upstream MCP server did not record the allowed calls:\n%s", data)
	}
}

// TestMCPHidesStateChangingWithoutMutatingAutorun: with mutating auto-run
// off (the default) a state-changing procedure is not an MCP tool on
// either endpoint, so calling it is "unknown tool" — not a denial, and
// nothing is decided or reaches the upstream (docs/mcp.md).
func TestMCPHidesStateChangingWithoutMutatingAutorun(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up})
	mutating := mustCaptureName(t, s, "a = tools.get_task_jobs_summary(task_id=task_id)\ntools.retry_task(task_id=task_id)\nreturn a\n", "h1")
	for _, path := range []string{"/mcp", "/mcp/interactive"} {
		sess := mustMCPClient(t, s, path, nil)
		if tools := mcpToolNames(t, sess); tools[mutating] != nil {
			t.Fatalf("%s lists %s with mutating auto-run off", path, mutating)
		}
		res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: mutating, Arguments: map[string]any{"task_id": 7}})
		text := ""
		if err != nil {
			text = err.Error()
		} else {
			text = mcpText(res)
		}
		if !strings.Contains(strings.ToLower(text), "unknown tool") || strings.Contains(text, "denied") {
			t.Fatalf("%s: calling a hidden procedure: %v %q", path, err, text)
		}
	}
	up.mustSeeNothing(t, "a hidden procedure")
	if ds := s.decisions(t, "procedure="+mutating); len(ds) != 0 {
		t.Fatalf("a call to a hidden procedure was decided: %v", ds)
	}
}
