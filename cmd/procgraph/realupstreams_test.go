package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
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
// in the automatic phase with the disk and the repository unchanged, and
// an approved write runs exactly once; a server whose annotations are not
// trusted imports only state-changing tools.
func TestRealUpstreams(t *testing.T) {
	servers := realUpstreams(t)
	data, repo := mustUpstreamDirs(t, "hello from the disk\n")
	entry := func(argv []string, extra ...string) map[string]any {
		return map[string]any{"command": argv[0], "args": append(append([]string{}, argv[1:]...), extra...), "trust_annotations": true}
	}
	file := writeUpstreams(t, map[string]any{
		"everything": entry(servers["everything"]),
		"fs":         entry(servers["fs"], data, repo),
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
	// Fail closed: a server whose annotations are not trusted gives only
	// state-changing tools.
	untrusted := entry(servers["fs"], data)
	delete(untrusted, "trust_annotations")
	_, closed, _ := mustImportUpstreams(t, writeUpstreams(t, map[string]any{"fs": untrusted}))
	for _, tl := range closed {
		if tl.ReadOnly {
			t.Fatalf("an untrusted server's %s imported read-only", tl.Name)
		}
	}
	catFile := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(catFile, printed, 0o600); err != nil {
		t.Fatal(err)
	}

	s := mustServe(t, serverOpts{NoCatalogue: true, Extra: []string{"--tools", catFile, "--upstreams", file}})
	code := "text = tools.fs__read_text_file(path=path)\nsum = tools.everything__get_sum(a=x, b=y)\nstatus = tools.git__git_status(repo_path=repo)\nreturn [text, sum, status]\n"
	name := mustCaptureName(t, s, code, "real-1")
	if p := mustStatus(t, s.get(t, "/v1/procedures/"+name), 200); p["exposed"] != true {
		t.Fatalf("the procedure across three servers is not exposed: %v", p)
	}
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

	commits := func() string {
		out, err := exec.Command("git", "-C", repo, "rev-list", "--count", "HEAD").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	writeCode := "a = tools.fs__read_text_file(path=path)\ntools.fs__write_file(path=path, content=\"overwritten\")\n" +
		"tools.git__git_commit(repo_path=repo, message=\"never\")\nreturn a\n"
	write := mustCaptureName(t, s, writeCode, "real-2")
	r := s.invoke(t, write, map[string]any{"arguments": map[string]any{"path": filepath.Join(data, "note.txt"), "repo": repo,
		"content": "overwritten", "message": "never"}, "phase": "automatic"}) // (the literals were lifted)
	if r.Status != 403 {
		t.Fatalf("a write in the automatic phase: %d %s", r.Status, r.Body)
	}
	if b, _ := os.ReadFile(filepath.Join(data, "note.txt")); string(b) != "hello from the disk\n" || commits() != "1" {
		t.Fatalf("the disk or the repository changed: %q, %s commits", b, commits())
	}

	// An approved write runs exactly once: a file written into the
	// repository and committed (one more commit), and the approved turn
	// cannot be run a second time.
	turn := map[string]any{"code": "tools.fs__write_file(path=path, content=\"approved\")\ntools.git__git_add(repo_path=repo, files=[\"new.txt\"])\n" +
		"return tools.git__git_commit(repo_path=repo, message=\"approved\")\n", "session_id": "real", "phase": "interactive",
		"arguments": map[string]any{"path": filepath.Join(repo, "new.txt"), "repo": repo}}
	pending := mustStatus(t, s.send(t, req{Method: "POST", Path: "/v1/turns", Body: turn}), 202)
	id := pending["turn"].(map[string]any)["id"].(string)
	if commits() != "1" {
		t.Fatalf("a turn waiting for review committed: %s commits", commits())
	}
	mustStatus(t, s.send(t, req{Method: "POST", Path: "/v1/approvals/" + id + "/resolve", Body: map[string]any{"choice": "run_once", "reason": "checked"}}), 200)
	if ran := mustStatus(t, s.send(t, req{Method: "POST", Path: "/v1/turns/" + id + "/run"}), 200); ran["status"] != "succeeded" {
		t.Fatalf("the approved write: %v", ran)
	}
	if r := s.send(t, req{Method: "POST", Path: "/v1/turns/" + id + "/run"}); r.Status != 409 {
		t.Fatalf("the approved turn run again: %d %s", r.Status, r.Body)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "new.txt")); string(b) != "approved" || commits() != "2" {
		t.Fatalf("after the approved write: %q, %s commits; want it written and committed once", b, commits())
	}
}

// childProcess is the pid of this process's child whose command line
// contains part (a server procgraph started), 0 when there is none.
func childProcess(t *testing.T, part string) int {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		if cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); bytes.Contains(cmdline, []byte(part)) {
			return pid
		}
	}
	return 0
}

// TestRealUpstreamKilledMidCall: server-everything killed (SIGKILL) while
// a long call of it is in flight: the call fails upstream_unavailable,
// procgraph's supervision starts the server again, the next call is
// served, and nothing is demoted; a call beside the long one is served
// while it runs.
func TestRealUpstreamKilledMidCall(t *testing.T) {
	servers := realUpstreams(t)
	file := writeUpstreams(t, map[string]any{"everything": map[string]any{"command": servers["everything"][0], "args": servers["everything"][1:], "trust_annotations": true}})
	printed, _, _ := mustImportUpstreams(t, file)
	catFile := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(catFile, printed, 0o600); err != nil {
		t.Fatal(err)
	}
	s := mustServe(t, serverOpts{NoCatalogue: true, Extra: []string{"--tools", catFile, "--upstreams", file, "--replay-timeout", "2m"}})
	long := mustCaptureName(t, s, "return tools.everything__trigger_long_running_operation(duration=d, steps=n)\n", "kill-1")
	sum := mustCaptureName(t, s, "return tools.everything__get_sum(a=x, b=y)\n", "kill-2")
	summed := func() {
		t.Helper()
		out := mustStatus(t, s.invoke(t, sum, automatic(map[string]any{"x": 2, "y": 40})), 200)
		if got, _ := json.Marshal(out["result"]); out["status"] != "succeeded" || !strings.Contains(string(got), "42") {
			t.Fatalf("get-sum: %v", out)
		}
	}
	summed()
	pid := childProcess(t, "server-everything")
	if pid == 0 {
		t.Fatal("server-everything is not a child of procgraph")
	}
	answered := make(chan reply, 1)
	go func() { answered <- s.invoke(t, long, automatic(map[string]any{"d": 600, "n": 1})) }()
	// The long call is in flight once its frame is held by the dispatcher
	// (tool call bytes in flight); a call beside it is served meanwhile.
	for deadline := time.Now().Add(time.Minute); !regexp.MustCompile(`(?m)^procgraph_tool_call_bytes_in_flight [1-9]`).Match(s.get(t, "/metrics").Body); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the long call never started")
		}
	}
	summed()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	mustFailWith(t, mustStatus(t, <-answered, 200), "upstream_unavailable", "upstream_unavailable")
	summed()
	// The outage is counted in the health and demotes nothing.
	p := mustStatus(t, s.get(t, "/v1/procedures/"+long), 200)
	h, _ := p["health"].(map[string]any)
	failures, _ := h["failures"].(map[string]any)
	if p["demoted"] != false || failures["upstream_unavailable"] != float64(1) || h["demotion_streak"] != float64(0) {
		t.Fatalf("after the outage: demoted %v, health %v; want upstream_unavailable counted, no streak, not demoted", p["demoted"], h)
	}
	if again := childProcess(t, "server-everything"); again == 0 || again == pid {
		t.Fatalf("server-everything was not started again: pid %d (was %d)", again, pid)
	}
}

// mustUpstreamDirs makes what the real servers serve: a directory holding
// note.txt (text) for the filesystem server, and a git repository with one
// empty commit for the git server.
func mustUpstreamDirs(t *testing.T, text string) (files, repo string) {
	t.Helper()
	dir := t.TempDir()
	files, repo = filepath.Join(dir, "files"), filepath.Join(dir, "repo")
	for _, d := range []string{files, repo} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(files, "note.txt"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "."}, {"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "first"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return files, repo
}

// TestRealUpstreamsLargeResult: a 600 KB file read through the real
// filesystem server, beside the real git server, reaches the official
// Python SDK over /mcp whole, once, as structured content with a short
// text beside it.
func TestRealUpstreamsLargeResult(t *testing.T) {
	argv, missing := pythonClient()
	requireSDK(t, missing)
	servers := realUpstreams(t)
	data, repo := mustUpstreamDirs(t, "small\n")
	big := filepath.Join(data, "big.txt")
	if err := os.WriteFile(big, bytes.Repeat([]byte("0123456789abcdef\n"), 600000/17+1), 0o600); err != nil {
		t.Fatal(err)
	}
	file := writeUpstreams(t, map[string]any{
		"fs":  map[string]any{"command": servers["fs"][0], "args": append(append([]string{}, servers["fs"][1:]...), data), "trust_annotations": true},
		"git": map[string]any{"command": servers["git"][0], "args": append(append([]string{}, servers["git"][1:]...), "--repository", repo), "trust_annotations": true},
	})
	printed, _, _ := mustImportUpstreams(t, file)
	catFile := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(catFile, printed, 0o600); err != nil {
		t.Fatal(err)
	}
	s := mustServe(t, serverOpts{NoCatalogue: true, Extra: []string{"--tools", catFile, "--upstreams", file}})
	// The paths as written (lift: false): the client passes only task_id.
	code := fmt.Sprintf("text = tools.fs__read_text_file(path=%q)\nstatus = tools.git__git_status(repo_path=%q)\nreturn {\"text\": text, \"status\": status, \"task\": task_id}\n", big, repo)
	out := s.mustCapture(t, map[string]any{"code": code, "session_id": "large", "lift": false}, nil)
	name := out["procedure"].(map[string]any)["name"].(string)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], "large.py", s.URL+"/mcp", name)
	cmd.Dir = interopDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	res, err := cmd.Output()
	if err != nil {
		t.Fatalf("the client failed: %v\nstdout:\n%s\nstderr:\n%s", err, res, stderr.String())
	}
	var got struct {
		IsError         bool   `json:"is_error"`
		StructuredBytes int    `json:"structured_bytes"`
		TextLen         int    `json:"text_len"`
		Text            string `json:"text"`
	}
	if err := json.Unmarshal(res, &got); err != nil {
		t.Fatalf("the client printed %q: %v", res, err)
	}
	if got.IsError || got.StructuredBytes < 600000 || got.TextLen > 1000 || !strings.Contains(got.Text, "structured content") {
		t.Fatalf("the SDK read: %+v", got)
	}
}
