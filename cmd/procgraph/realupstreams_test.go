package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The real-upstreams test fronts MCP servers installed from the registries
// (testdata/upstreams: @modelcontextprotocol/server-everything and
// -filesystem from npm, mcp-server-git from PyPI). .ci/run installs them;
// locally the test skips with the commands that install them, and under
// CI=true a missing server fails.
const realUpstreamsDir = "testdata/upstreams"

// realUpstreams returns the argv of each installed server by key, or what
// is missing.
func realUpstreams(t *testing.T) map[string][]string {
	t.Helper()
	dir, err := filepath.Abs(realUpstreamsDir)
	if err != nil {
		t.Fatal(err)
	}
	install := "install them with: (cd cmd/procgraph/testdata/upstreams && npm ci && python3 -m venv .venv && .venv/bin/pip install -r requirements.txt)"
	node, err := exec.LookPath("node")
	if err != nil {
		requireSDK(t, "node is not on PATH; "+install)
	}
	if _, err := exec.LookPath("git"); err != nil {
		requireSDK(t, "git is not on PATH (mcp-server-git needs it)")
	}
	servers := map[string][]string{
		"everything": {node, filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")},
		"fs":         {node, filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")},
		"git":        {filepath.Join(dir, ".venv", "bin", "mcp-server-git")},
	}
	for key, argv := range servers {
		if _, err := os.Stat(argv[len(argv)-1]); err != nil {
			requireSDK(t, "the "+key+" MCP server is missing ("+argv[len(argv)-1]+"); "+install)
		}
	}
	return servers
}

// TestRealUpstreams: procgraph in front of server-filesystem,
// server-everything and mcp-server-git together, from one upstreams file.
// Every tool is imported (kebab-case ones included) with its server's
// prefix; a procedure spanning the three servers is captured and replayed
// in the automatic phase, each call reaching its server; a write is refused
// in the automatic phase with the disk unchanged.
func TestRealUpstreams(t *testing.T) {
	servers := realUpstreams(t)
	dir := t.TempDir()
	data, repo := filepath.Join(dir, "data"), filepath.Join(dir, "repo")
	for _, d := range []string{data, repo} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(data, "note.txt"), []byte("hello from the disk\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "."}, {"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "first"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	entry := func(argv []string, extra ...string) map[string]any {
		return map[string]any{"command": argv[0], "args": append(append([]string{}, argv[1:]...), extra...), "trust_annotations": true}
	}
	file := writeUpstreams(t, map[string]any{
		"everything": entry(servers["everything"]),
		"fs":         entry(servers["fs"], data),
		"git":        entry(servers["git"], "--repository", repo),
	})

	printed, imported, stderr := mustImportUpstreams(t, file)
	perServer := map[string]int{}
	route := map[string]string{}
	readOnly := map[string]bool{}
	for _, tl := range imported {
		perServer[tl.Server]++
		route[tl.Name] = tl.Server + "/" + tl.UpstreamName
		readOnly[tl.Name] = tl.ReadOnly
	}
	if route["everything__get_sum"] != "everything/get-sum" || route["everything__trigger_long_running_operation"] != "everything/trigger-long-running-operation" ||
		route["fs__read_text_file"] != "fs/read_text_file" || route["git__git_status"] != "git/git_status" {
		t.Fatalf("routes %v", route)
	}
	if perServer["everything"] < 10 || perServer["fs"] < 10 || perServer["git"] < 10 || strings.Contains(stderr, "skipped tool") {
		t.Fatalf("imported per server %v; stderr:\n%s", perServer, stderr)
	}
	if !readOnly["fs__read_text_file"] || readOnly["fs__write_file"] || readOnly["git__git_commit"] {
		t.Fatalf("read-only classes: %v", readOnly)
	}
	catFile := filepath.Join(dir, "tools.json")
	if err := os.WriteFile(catFile, printed, 0o600); err != nil {
		t.Fatal(err)
	}

	s := mustServe(t, serverOpts{NoCatalogue: true, Extra: []string{"--tools", catFile, "--upstreams", file}})
	code := "text = tools.fs__read_text_file(path=path)\nsum = tools.everything__get_sum(a=x, b=y)\nstatus = tools.git__git_status(repo_path=repo)\nreturn [text, sum, status]\n"
	name := mustCaptureName(t, s, code, "real-1")
	args := map[string]any{"path": filepath.Join(data, "note.txt"), "x": 2, "y": 40, "repo": repo}
	for range 2 {
		out := mustStatus(t, s.invoke(t, name, map[string]any{"arguments": args, "phase": "automatic"}), 200)
		if out["status"] != "succeeded" {
			t.Fatalf("a procedure across three real servers: %v", out)
		}
		got, _ := json.Marshal(out["result"])
		if !strings.Contains(string(got), "hello from the disk") || !strings.Contains(string(got), "42") || !strings.Contains(strings.ToLower(string(got)), "branch") {
			t.Fatalf("result %s", got)
		}
	}

	write := mustCaptureName(t, s, "a = tools.fs__read_text_file(path=path)\ntools.fs__write_file(path=path, content=\"overwritten\")\nreturn a\n", "real-2")
	r := s.invoke(t, write, map[string]any{"arguments": map[string]any{"path": filepath.Join(data, "note.txt"), "content": "overwritten"}, "phase": "automatic"})
	if r.Status != 403 {
		t.Fatalf("a write in the automatic phase: %d %s", r.Status, r.Body)
	}
	if b, _ := os.ReadFile(filepath.Join(data, "note.txt")); string(b) != "hello from the disk\n" {
		t.Fatalf("the disk changed: %q", b)
	}
}
