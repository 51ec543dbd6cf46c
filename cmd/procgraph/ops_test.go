package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procgraph/procgraph/graph/embedded"
)

// promLine is one sample line of the Prometheus text format.
var promLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*"(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*")*)?\})? ([-+]?(?:[0-9.eE+-]+|Inf|NaN))$`)

// TestMetricsAndOpenAPI checks /metrics (requests by route and status,
// the latency histogram, replays by outcome, decisions by reason, sandbox
// pool gauges, valid text format) and /openapi.json (OpenAPI 3.1).
func TestMetricsAndOpenAPI(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	up.fail["search_panda_docs"] = "boom"
	s := mustServe(t, serverOpts{Upstream: up})
	mustCaptureName(t, s, readOnlyCode, "a")
	mustCaptureName(t, s, killCode, "a")
	failing := mustCaptureName(t, s, "a = tools.search_panda_docs(query=q)\nreturn [a, tools.get_retry_chain(task_id=1)]", "a")
	mustStatus(t, s.invoke(t, readOnlyName, map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "automatic"}), 200)
	mustStatus(t, s.invoke(t, failing, map[string]any{"arguments": map[string]any{"q": "x", "task_id": 1}, "phase": "automatic"}), 200)
	mustError(t, s.invoke(t, killName, map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "automatic"}), 403, "denied")
	mustError(t, s.send(t, req{Method: "PUT", Path: "/v1/procedures/" + killName + "/auto-run", Body: map[string]any{"enabled": true}}), 409, "conflict")
	mustError(t, s.get(t, "/v1/procedures?limit=x"), 400, "invalid_request")

	r := s.send(t, req{Method: "GET", Path: "/metrics"})
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("/metrics: %d %v", r.Status, r.Header)
	}
	text := string(r.Body)
	typed := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "# TYPE "):
			f := strings.Fields(line)
			if len(f) != 4 {
				t.Fatalf("bad TYPE line %q", line)
			}
			if _, dup := typed[f[2]]; dup {
				t.Fatalf("TYPE of %s twice", f[2])
			}
			typed[f[2]] = f[3]
		case strings.HasPrefix(line, "# HELP "), line == "":
		default:
			m := promLine.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("not a sample line: %q", line)
			}
			family := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m[1], "_bucket"), "_sum"), "_count")
			if typed[m[1]] == "" && typed[family] == "" {
				t.Fatalf("sample %q before its TYPE", line)
			}
		}
	}
	for _, want := range []string{
		`procgraph_http_requests_total{method="POST",route="/v1/procedures",status="201"} 3`,
		`procgraph_http_requests_total{method="POST",route="/v1/procedures/{name}/invoke",status="200"} 2`,
		`procgraph_http_requests_total{method="POST",route="/v1/procedures/{name}/invoke",status="403"} 1`,
		`procgraph_http_requests_total{method="GET",route="/v1/procedures",status="400"} 1`,
		`procgraph_http_request_duration_seconds_bucket{route="/v1/procedures/{name}/invoke",le="+Inf"} 3`,
		`procgraph_http_request_duration_seconds_count{route="/v1/procedures/{name}/invoke"} 3`,
		`procgraph_replays_total{error="",status="succeeded"} 1`,
		`procgraph_replays_total{error="tool_failed",status="failed"} 1`,
		`procgraph_decisions_total{kind="invoke",outcome="allowed",reason="read_only"} 2`,
		`procgraph_decisions_total{kind="invoke",outcome="denied",reason="state_changing_in_automatic_phase"} 1`,
		`procgraph_decisions_total{kind="grant",outcome="denied",reason="not_read_only"} 1`,
		`procgraph_sandbox_workers_idle{pool="replay"} `,
		`procgraph_sandbox_workers_busy{pool="replay"} 0`,
		`procgraph_sandbox_workers_started{pool="replay"} `,
		`procgraph_sandbox_workers_idle{pool="nested"} `,
		"\nprocgraph_replays_running 0\n",
		"\nprocgraph_replays_waiting 0\n",
		"\nprocgraph_replays_admitted_total ",
		`procgraph_replays_busy_total{limit="queue"} 0`,
		`procgraph_replays_busy_total{limit="deadline"} 0`,
		`procgraph_replays_busy_total{limit="key"} 0`,
		"\nprocgraph_tool_call_bytes_in_flight 0\n",
		"\nprocgraph_tool_call_budget_refusals_total 0\n",
		"\nprocgraph_mcp_sessions 0\n",
		`procgraph_mcp_sessions_refused_total{limit="per_token"} 0`,
		`procgraph_mcp_sessions_refused_total{limit="total"} 0`,
		"\nprocgraph_search_index_pending ",
		"\nprocgraph_search_index_failed 0\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	for name, typ := range map[string]string{"procgraph_http_requests_total": "counter", "procgraph_http_request_duration_seconds": "histogram",
		"procgraph_sandbox_workers_idle": "gauge", "procgraph_decisions_total": "counter", "procgraph_replays_total": "counter",
		"procgraph_sandbox_workers_started": "counter", "procgraph_sandbox_workers_crashed": "counter", "procgraph_sandbox_workers_killed": "counter",
		"procgraph_replays_running": "gauge", "procgraph_replays_waiting": "gauge", "procgraph_replays_admitted_total": "counter",
		"procgraph_replays_busy_total": "counter", "procgraph_tool_call_bytes_in_flight": "gauge",
		"procgraph_tool_call_budget_refusals_total": "counter", "procgraph_mcp_sessions": "gauge",
		"procgraph_mcp_sessions_refused_total": "counter", "procgraph_search_index_pending": "gauge", "procgraph_search_index_failed": "gauge",
		"go_goroutines": "gauge", "process_resident_memory_bytes": "gauge"} {
		if typed[name] != typ {
			t.Errorf("TYPE of %s is %q, want %s", name, typed[name], typ)
		}
	}

	doc := mustStatus(t, s.get(t, "/openapi.json"), 200)
	if doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi %v", doc["openapi"])
	}
	paths := doc["paths"].(map[string]any)
	for _, p := range []string{"/v1/procedures", "/v1/procedures/{name}/invoke", "/v1/tools", "/v1/decisions", "/healthz"} {
		if paths[p] == nil {
			t.Errorf("/openapi.json lacks %s", p)
		}
	}
	if mustStatus(t, s.get(t, "/readyz"), 200)["status"] != "ok" {
		t.Fatal("/readyz")
	}
}

// TestSIGTERMDrains starts serve as a real process (this test binary
// re-executed as procgraph), sends SIGTERM while a slow replay is in flight,
// and checks that the replay completes with 200, the process exits 0, and
// the data file opens again (its lock is released).
func TestSIGTERMDrains(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a subprocess")
	}
	up := mustUpstream(t)
	data := filepath.Join(t.TempDir(), "p.db")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, serverOpts{Upstream: up, Data: data}.args(t)...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	// A real process: its address is only in its "listening" line.
	sink, addrc := &logSink{}, make(chan string, 1)
	logDone := make(chan struct{})
	go func() { consumeLog(stderr, sink, addrc); close(logDone) }()
	s := &server{logs: sink}
	select {
	case s.URL = <-addrc:
	case <-time.After(30 * time.Second):
		t.Fatalf("the subprocess did not listen:\n%s", sink.String())
	}
	mustCaptureName(t, s, readOnlyCode, "a")
	up.setDelay("get_retry_chain", time.Second)

	type result struct {
		r   reply
		err string
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- result{err: "panic"}
			}
		}()
		done <- result{r: s.invoke(t, readOnlyName, map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "automatic"})}
	}()
	up.mustReach(t, "get_retry_chain")
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.err != "" {
		t.Fatal(res.err)
	}
	out := mustStatus(t, res.r, 200)
	if out["status"] != "succeeded" {
		t.Fatalf("the in-flight replay: %v", out)
	}
	// Read the log to its end before Wait, which closes the pipe.
	select {
	case <-logDone:
	case <-time.After(40 * time.Second):
		t.Fatalf("the subprocess did not exit after SIGTERM:\n%s", sink.String())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, sink.String())
	}
	if cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("exit code %d", cmd.ProcessState.ExitCode())
	}
	if took := time.Since(sent); took > 15*time.Second {
		t.Fatalf("drain took %v", took)
	}
	logs := sink.String()
	for _, want := range []string{"draining", `"message":"stopped"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
	st, err := embedded.Open(data, embedded.Options{LockTimeout: 2 * time.Second})
	if err != nil {
		t.Fatalf("the data file does not open again: %v", err)
	}
	defer st.Close()
	p, err := st.Get(t.Context(), readOnlyName)
	if err != nil || p.UseCount != 1 {
		t.Fatalf("after the drain: %+v, %v (the drained replay must be counted)", p, err)
	}
	var ev map[string]any
	_ = json.Unmarshal([]byte(strings.SplitN(logs, "\n", 2)[0]), &ev)
	if ev["level"] == nil {
		t.Fatalf("the log is not zerolog JSON: %s", logs)
	}
}

// consumeLog copies a subprocess's log to sink and sends the address of
// its "listening" line to addrc.
func consumeLog(r io.Reader, sink *logSink, addrc chan<- string) {
	br := bufio.NewReader(r)
	sent := false
	for {
		line, err := br.ReadString('\n')
		_, _ = sink.Write([]byte(line))
		var ev struct {
			Message string `json:"message"`
			Addr    string `json:"addr"`
		}
		if !sent && json.Unmarshal([]byte(line), &ev) == nil && ev.Message == "listening" && ev.Addr != "" {
			addrc <- ev.Addr
			sent = true
		}
		if err != nil {
			_, _ = io.Copy(io.Discard, r)
			return
		}
	}
}

// TestIndex: GET / points a newcomer (or a browser) at the API
// description, health, metrics, the API and MCP, without a token.
func TestIndex(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.json")
	mustCreateToken(t, tokens, "ops", "read")
	s := mustServe(t, serverOpts{TokensFile: tokens})
	out := mustStatus(t, s.get(t, "/"), 200)
	links, _ := out["links"].(map[string]any)
	for _, want := range []string{"/ui/", "/openapi.json", "/healthz", "/readyz", "/metrics", "/v1/", "/mcp", "/mcp/interactive"} {
		if what, ok := links[want].(string); !ok || what == "" {
			t.Errorf("GET / lacks %s: %v", want, out)
		}
	}
	for path := range links {
		if path == "/v1/" || strings.HasPrefix(path, "/mcp") {
			continue
		}
		if r := s.get(t, path); r.Status != 200 {
			t.Errorf("GET %s (linked from /): %d", path, r.Status)
		}
	}
}
