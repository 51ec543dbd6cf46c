package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The MCP interop tests run the official SDKs' clients (testdata/interop)
// against a real server. .ci/run installs them; locally they skip with the
// commands that install them, and under CI=true a missing SDK fails.
const interopDir = "testdata/interop"

// interopStep is one line a client prints.
type interopStep struct {
	Step     string          `json:"step"`
	Tools    []string        `json:"tools"`
	ReadOnly map[string]bool `json:"read_only"`
	IsError  bool            `json:"is_error"`
	Text     string          `json:"text"`
}

// requireSDK skips (or, in CI, fails) a test whose SDK is not installed.
func requireSDK(t *testing.T, missing string) {
	t.Helper()
	if missing == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and %s (.ci/run installs it)", missing)
	}
	t.Skipf("%s; skipping the interop test", missing)
}

// pythonClient is the command running client.py with the official Python
// SDK: MCP_INTEROP_PYTHON, else testdata/interop/.venv/bin/python.
func pythonClient() ([]string, string) {
	py := os.Getenv("MCP_INTEROP_PYTHON")
	if py == "" {
		abs, _ := filepath.Abs(filepath.Join(interopDir, ".venv", "bin", "python"))
		py = abs
	}
	install := "install it with: python3 -m venv cmd/procgraph/testdata/interop/.venv && " +
		"cmd/procgraph/testdata/interop/.venv/bin/pip install -r cmd/procgraph/testdata/interop/requirements.txt"
	if _, err := os.Stat(py); err != nil {
		return nil, "the Python MCP SDK is missing (no " + py + "); " + install
	}
	if out, err := exec.Command(py, "-c", "import mcp").CombinedOutput(); err != nil {
		return nil, "the Python MCP SDK does not import (" + strings.TrimSpace(string(out)) + "); " + install
	}
	return []string{py, "client.py"}, ""
}

// typeScriptClient is the command running client.mjs with the official
// TypeScript SDK from testdata/interop/node_modules.
func typeScriptClient() ([]string, string) {
	install := "install it with: (cd cmd/procgraph/testdata/interop && npm ci)"
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, "node is not on PATH; " + install
	}
	if _, err := os.Stat(filepath.Join(interopDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		return nil, "the TypeScript MCP SDK is missing; " + install
	}
	return []string{node, "client.mjs"}, ""
}

func TestMCPInteropPython(t *testing.T) {
	t.Parallel()
	argv, missing := pythonClient()
	requireSDK(t, missing)
	runInterop(t, argv)
}

func TestMCPInteropTypeScript(t *testing.T) {
	t.Parallel()
	argv, missing := typeScriptClient()
	requireSDK(t, missing)
	runInterop(t, argv)
}

// runInterop drives one SDK client against a real Main on /mcp: it pings
// its session (an answer the server sends as one JSON body), lists the
// tools, calls a read-only proc__ tool, is denied a state-changing one
// as a tool error (nothing reaches the upstream), and is told of a capture
// by notifications/tools/list_changed; the client prints no warning.
func runInterop(t *testing.T, argv []string) {
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up, AllowMutating: true})
	readOnly := mustCaptureName(t, s, "a = tools.get_task_jobs_summary(task_id=task_id)\nb = tools.get_retry_chain(task_id=task_id)\nreturn [a, b]\n", "i1")
	mutating := mustCaptureName(t, s, "a = tools.get_task_jobs_summary(task_id=task_id)\ntools.retry_task(task_id=task_id)\nreturn a\n", "i2")

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], append(argv[1:], s.URL+"/mcp", readOnly, mutating)...)
	cmd.Dir = interopDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var printed strings.Builder
	lines := bufio.NewScanner(io.TeeReader(stdout, &printed))
	next := func(want string) interopStep {
		t.Helper()
		if !lines.Scan() {
			_ = cmd.Wait()
			t.Fatalf("the client stopped before step %s\nstdout:\n%s\nstderr:\n%s", want, printed.String(), stderr.String())
		}
		var st interopStep
		if err := json.Unmarshal(lines.Bytes(), &st); err != nil || st.Step != want {
			t.Fatalf("step %q: got %s (%v)\nstderr:\n%s", want, lines.Text(), err, stderr.String())
		}
		return st
	}

	next("ping") // the session's ping, answered as one JSON body
	list := next("list")
	for _, name := range []string{"find_all_procedures", readOnly, mutating} {
		if !slices.Contains(list.Tools, name) {
			t.Errorf("tool %s not listed: %v", name, list.Tools)
		}
	}
	if slices.Contains(list.Tools, "set_procedure_auto_run") {
		t.Errorf("set_procedure_auto_run listed without auth: %v", list.Tools)
	}
	if !list.ReadOnly[readOnly] || list.ReadOnly[mutating] {
		t.Errorf("readOnlyHint: %v", list.ReadOnly)
	}
	if call := next("call"); call.IsError || !strings.Contains(call.Text, "get_retry_chain") {
		t.Errorf("the read-only call: %+v", call)
	}
	if got := strings.Join(up.tools(), ","); got != "get_task_jobs_summary,get_retry_chain" {
		t.Errorf("the upstream saw %q", got)
	}
	up.reset()
	if deny := next("deny"); !deny.IsError || !strings.Contains(deny.Text, "state_changing_in_automatic_phase") {
		t.Errorf("a state-changing call on /mcp must be a tool error naming the denial: %+v", deny)
	}
	up.mustSeeNothing(t, "a denied MCP call")
	next("ready")

	added := mustCaptureName(t, s, "a = tools.get_task_input_datasets(task_id=task_id)\nreturn [a, tools.fetch_brokerage_context(task_id=task_id)]\n", "i3")
	if _, err := io.WriteString(stdin, "captured\n"); err != nil {
		t.Fatal(err)
	}
	if changed := next("changed"); !slices.Contains(changed.Tools, added) {
		t.Errorf("%s not listed after list_changed: %v", added, changed.Tools)
	}
	_ = stdin.Close()
	_, _ = io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the client failed: %v\nstderr:\n%s", err, stderr.String())
	}
	// No warnings: the SDK's logging and the transport's errors go to
	// stderr (Python's "Unknown SSE event: prime" among them).
	if e := strings.TrimSpace(stderr.String()); e != "" {
		t.Errorf("the client wrote to stderr:\n%s", e)
	}
	if out := strings.ToLower(printed.String()); strings.Contains(out, "warning") || strings.Contains(out, "unknown sse event") {
		t.Errorf("the client's output has a warning:\n%s", printed.String())
	}
}

// TestMCPInteropLargeResult: a 600 KB result (under the sandbox's bound)
// reaches the official Python SDK whole, once, as structured content with
// a short text beside it; sent twice it made a server-sent event over the
// SDK's 1 MiB limit and the call failed.
func TestMCPInteropLargeResult(t *testing.T) {
	t.Parallel()
	argv, missing := pythonClient()
	requireSDK(t, missing)
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up})
	name := mustCaptureName(t, s, "a = tools.get_task_jobs_summary(task_id=task_id)\nb = tools.get_retry_chain(task_id=task_id)\nreturn {\"a\": a, \"b\": b, \"pad\": \"x\" * 600000}\n", "large")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], "large.py", s.URL+"/mcp", name)
	cmd.Dir = interopDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the client failed: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	var got struct {
		IsError         bool   `json:"is_error"`
		StructuredBytes int    `json:"structured_bytes"`
		TextLen         int    `json:"text_len"`
		Text            string `json:"text"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the client printed %q: %v", out, err)
	}
	if got.IsError || got.StructuredBytes < 600000 || got.TextLen > 1000 || !strings.Contains(got.Text, "structured content") {
		t.Fatalf("the SDK read: %+v", got)
	}
	if e := strings.TrimSpace(stderr.String()); e != "" {
		t.Errorf("the client wrote to stderr:\n%s", e)
	}
}
