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
	"time"
)

// writeUpstreams writes an upstreams file of servers (key → its object).
func writeUpstreams(t *testing.T, servers map[string]any) string {
	t.Helper()
	b, err := json.MarshalIndent(map[string]any{"mcpServers": servers}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "upstreams.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// calledTools reads the tools a test MCP server recorded calls of
// (MCPTEST_RECORD: one JSON object per line).
func calledTools(path string) []string {
	data, _ := os.ReadFile(path)
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var c struct {
			Tool string `json:"tool"`
		}
		if json.Unmarshal([]byte(line), &c) == nil {
			out = append(out, c.Tool)
		}
	}
	return out
}

// TestTwoUpstreamsThroughMain: two MCP servers over stdio under two keys.
// `tools import --upstreams` names their tools with prefixes (a
// kebab-case tool included), serve --upstreams routes a procedure's calls
// to both, each reaching its own server under its own name, captured and
// replayed; the catalogue's routes round-trip through /v1/tools.
func TestTwoUpstreamsThroughMain(t *testing.T) {
	bin := buildMCPServer(t)
	dir := t.TempDir()
	jobsCalls, mathCalls := filepath.Join(dir, "jobs.jsonl"), filepath.Join(dir, "math.jsonl")
	file := writeUpstreams(t, map[string]any{
		"jobs": map[string]any{"command": bin, "env": map[string]string{"MCPTEST_RECORD": jobsCalls, "MCPTEST_NAME": "jobs", "MCPTEST_STDERR": "jobs \u202eready"}, "trust_annotations": true},
		"math": map[string]any{"command": bin, "env": map[string]string{"MCPTEST_RECORD": mathCalls, "MCPTEST_NAME": "math"}, "trust_annotations": true, "prefix": "m"},
	})

	printed, imported, _ := mustImportUpstreams(t, file)
	route := map[string]string{}
	for _, tool := range imported {
		route[tool.Name] = tool.Server + "/" + tool.UpstreamName
	}
	if route["jobs__get_jobs"] != "jobs/get_jobs" || route["m__get_sum"] != "math/get-sum" || route["jobs__bad_name"] != "jobs/bad-name" || len(route) != 24 {
		t.Fatalf("imported routes %v", route)
	}
	if len(calledTools(jobsCalls))+len(calledTools(mathCalls)) != 0 {
		t.Fatal("the import called a tool")
	}
	catFile := filepath.Join(dir, "catalogue.json")
	if err := os.WriteFile(catFile, printed, 0o600); err != nil {
		t.Fatal(err)
	}

	s := mustServe(t, serverOpts{NoCatalogue: true, Extra: []string{"--tools", catFile, "--upstreams", file}})
	for _, key := range []string{"jobs", "math"} {
		if !strings.Contains(s.logs.String(), `"server":"`+key+`","tools":12,`) {
			t.Fatalf("no start logged for %s:\n%s", key, s.logs.String())
		}
	}
	// The server's stderr is in the log, escaped, with its key (copied from
	// its pipe as it comes: waited for).
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(s.logs.String(), `"server":"jobs","upstream":"`+bin+`","stderr":"jobs \\u202eready"`); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the jobs server's stderr is not logged, escaped, by its key:\n%s", s.logs.String())
		}
	}
	name := mustCaptureName(t, s, "a = tools.jobs__get_jobs(task_id=task_id)\nb = tools.m__get_sum(a=task_id, b=2)\nreturn [a, b]\n", "u1")
	for i := range 2 {
		out := mustStatus(t, s.invoke(t, name, map[string]any{"arguments": map[string]any{"task_id": 40 + i}, "phase": "automatic"}), 200)
		if out["status"] != "succeeded" {
			t.Fatalf("replay across two servers: %v", out)
		}
		result := out["result"].([]any)
		if jobs := result[0].(map[string]any)["jobs"]; len(jobs.([]any)) != 2 {
			t.Fatalf("jobs__get_jobs: %v", result)
		}
		if sum := result[1].(map[string]any); sum["sum"] != float64(42+i) || sum["server"] != "math" {
			t.Fatalf("m__get_sum answered by %v", sum)
		}
	}
	if got := strings.Join(calledTools(jobsCalls), ","); got != "get_jobs,get_jobs" {
		t.Fatalf("the jobs server received %s", got)
	}
	if got := strings.Join(calledTools(mathCalls), ","); got != "get-sum,get-sum" {
		t.Fatalf("the math server received %s", got)
	}

	// The routes round-trip through the API.
	listed := mustStatus(t, s.get(t, "/v1/tools"), 200)
	found := false
	for _, tl := range listed["tools"].([]any) {
		m := tl.(map[string]any)
		if m["name"] == "m__get_sum" {
			found = m["server"] == "math" && m["upstream_name"] == "get-sum"
		}
	}
	if !found {
		t.Fatalf("GET /v1/tools lost m__get_sum's route: %v", listed)
	}
	// `procgraph tools get` shows where each tool is called.
	code, tout, terr := runMainWith(t, map[string]string{"PROCGRAPH_URL": s.URL}, "tools", "get")
	if code != 0 {
		t.Fatalf("tools get: exit %d: %s", code, terr)
	}
	if !strings.Contains(tout, "SERVER") || !regexp.MustCompile(`(?m)^m__get_sum\s+math\s+get-sum\s+yes`).MatchString(tout) {
		t.Fatalf("tools get:\n%s", tout)
	}
	// PUT takes the routes as they were listed; a route that is not one is refused.
	mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/tools", Body: map[string]any{"tools": listed["tools"]}}), 200)
	for _, bad := range []map[string]any{{"name": "x", "server": "a b"}, {"name": "x", "upstream_name": "a\nb"}, {"name": "get-sum"}} {
		if r := s.send(t, req{Method: "PUT", Path: "/v1/tools", Body: map[string]any{"tools": []any{bad}}}); r.Status != 400 && r.Status != 422 {
			t.Fatalf("PUT %v: %d %s", bad, r.Status, r.Body)
		}
	}
}

// TestUpstreamsRefuseToStart: two tools that map to one name refuse the
// start naming both; so do a file that does not parse (with its line and
// column) and a command that is not there (with its key); a server that
// does not answer does not.
func TestUpstreamsRefuseToStart(t *testing.T) {
	bin := buildMCPServer(t)
	serve := func(file string) error {
		_, err := startMain(t, serverOpts{Data: filepath.Join(t.TempDir(), "p.db"), NoCatalogue: true, Extra: []string{"--upstreams", file}}.args(t))
		return err
	}
	both := writeUpstreams(t, map[string]any{"a": map[string]any{"command": bin, "prefix": ""}, "b": map[string]any{"command": bin, "prefix": ""}})
	err := serve(both)
	if err == nil || !strings.Contains(err.Error(), `of server "a" and tool`) || !strings.Contains(err.Error(), `of server "b" both map to the catalogue name`) {
		t.Fatalf("a collision: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte("{\"mcpServers\": {\"a\": {\"command\": \"x\",\n  \"timout\": \"3s\"}}}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := serve(bad); err == nil || !strings.Contains(err.Error(), `--upstreams / PROCGRAPH_UPSTREAMS: `+bad+`: line 2, column 3: mcpServers.a: unknown key "timout"`) {
		t.Fatalf("an unknown key: %v", err)
	}
	missing := writeUpstreams(t, map[string]any{"gone": map[string]any{"command": "procgraph-no-such-server"}})
	if err := serve(missing); err == nil || !strings.Contains(err.Error(), `upstream server "gone"`) {
		t.Fatalf("a missing command: %v", err)
	}
	down := writeUpstreams(t, map[string]any{"up": map[string]any{"command": bin}, "down": map[string]any{"url": "http://127.0.0.1:1/mcp"}})
	s, err := startMain(t, serverOpts{Data: filepath.Join(t.TempDir(), "p.db"), NoCatalogue: true, Extra: []string{"--upstreams", down}}.args(t))
	if err != nil {
		t.Fatalf("a server down refused the start: %v", err)
	}
	if !strings.Contains(s.logs.String(), `"server":"down"`) || !strings.Contains(s.logs.String(), "upstream server did not start") {
		t.Fatalf("the server down is not logged by its key:\n%s", s.logs.String())
	}
	var stdout, stderr bytes.Buffer
	code := runCLI(context.Background(), []string{"serve", "--upstreams", both, "--upstream-mcp-command", bin}, nil, &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "are exclusive") {
		t.Fatalf("--upstreams with --upstream-mcp-command: exit %d: %s", code, stderr.String())
	}
}

// importedTool is a catalogue tool as `tools import` prints it.
type importedTool struct {
	Name         string `json:"name"`
	ReadOnly     bool   `json:"read_only"`
	Server       string `json:"server"`
	UpstreamName string `json:"upstream_name"`
}

// mustImportUpstreams runs `tools import --upstreams file` and returns the
// catalogue it printed (its bytes and its tools) and its stderr.
func mustImportUpstreams(t *testing.T, file string) (printed []byte, tools []importedTool, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := runCLI(context.Background(), []string{"tools", "import", "--upstreams", file}, nil, &out, &errOut); code != 0 {
		t.Fatalf("tools import: exit %d: %s", code, errOut.String())
	}
	var cat struct {
		Tools []importedTool `json:"tools"`
	}
	if err := json.Unmarshal(out.Bytes(), &cat); err != nil {
		t.Fatalf("tools import printed no catalogue: %v\n%s", err, out.String())
	}
	return out.Bytes(), cat.Tools, errOut.String()
}
