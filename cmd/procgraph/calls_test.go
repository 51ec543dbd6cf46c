package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recordedCall is one call a test MCP server recorded (MCPTEST_RECORD).
type recordedCall struct {
	Tool string `json:"tool"`
	PID  int    `json:"pid"`
}

// recordedCalls reads the calls a test MCP server recorded in path.
func recordedCalls(path string) []recordedCall {
	data, _ := os.ReadFile(path)
	var out []recordedCall
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var c recordedCall
		if json.Unmarshal([]byte(line), &c) == nil && c.Tool != "" {
			out = append(out, c)
		}
	}
	return out
}

// waitCall waits until the server recording into path has recorded n
// calls of tool, and returns the last.
func waitCall(t *testing.T, path, tool string, n int) recordedCall {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		var got []recordedCall
		for _, c := range recordedCalls(path) {
			if c.Tool == tool {
				got = append(got, c)
			}
		}
		if len(got) >= n {
			return got[n-1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("the upstream recorded %d calls of %s, want %d: %v", len(got), tool, n, calledTools(path))
		}
	}
}

// serveJobs serves the test MCP server under the key "jobs" (its calls
// recorded into the returned file), its tools imported with their
// annotations trusted, with entry's extra settings, the tools of extra
// added to the catalogue and serve's flags args.
func serveJobs(t *testing.T, entry map[string]any, servers map[string]any, extra []map[string]any, args ...string) (*server, string) {
	t.Helper()
	bin := buildMCPServer(t)
	record := filepath.Join(t.TempDir(), "calls.jsonl")
	jobs := map[string]any{"command": bin, "env": map[string]string{"MCPTEST_RECORD": record}, "trust_annotations": true}
	for k, v := range entry {
		jobs[k] = v
	}
	all := map[string]any{"jobs": jobs}
	for k, v := range servers {
		all[k] = v
	}
	file := writeUpstreams(t, all)
	printed, _, _ := mustImportUpstreams(t, writeUpstreams(t, map[string]any{"jobs": jobs}))
	var cat struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(printed, &cat); err != nil {
		t.Fatal(err)
	}
	for _, tl := range cat.Tools {
		if tl["name"] == "jobs__fail_job" { // an operator's choice: its failures are read-only
			tl["read_only"] = true
		}
	}
	cat.Tools = append(cat.Tools, extra...)
	data, err := json.Marshal(cat)
	if err != nil {
		t.Fatal(err)
	}
	catFile := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(catFile, data, 0o600); err != nil {
		t.Fatal(err)
	}
	s := mustServe(t, serverOpts{NoCatalogue: true, Extra: append([]string{"--tools", catFile, "--upstreams", file}, args...)})
	return s, record
}

// automatic is an automatic invoke's body with args.
func automatic(args map[string]any) map[string]any {
	return map[string]any{"arguments": args, "phase": "automatic"}
}

// mustFailWith requires an invoke's answer to be a failed run whose error
// code and decision result are code and class.
func mustFailWith(t *testing.T, out map[string]any, code, class string) map[string]any {
	t.Helper()
	e, _ := out["error"].(map[string]any)
	d, _ := out["decision"].(map[string]any)
	if out["status"] != "failed" || e["code"] != code || d["result"] != class {
		t.Fatalf("answer %v; want failed with %s, result %s", out, code, class)
	}
	return e
}

// TestUpstreamCallBoundedByReplayTimeout: a replay's upstream call is
// bounded by the larger of its server's timeout and --replay-timeout: a
// call longer than the server's "timeout" but within --replay-timeout is
// served.
func TestUpstreamCallBoundedByReplayTimeout(t *testing.T) {
	s, _ := serveJobs(t, map[string]any{"timeout": "1s"}, nil, nil, "--replay-timeout", "1m")
	name := mustCaptureName(t, s, "return tools.jobs__sleep(ms=ms)\n", "bound")
	out := mustStatus(t, s.invoke(t, name, automatic(map[string]any{"ms": 2000})), 200)
	if out["status"] != "succeeded" || out["result"] != "slept" {
		t.Fatalf("a call within --replay-timeout, past the server's timeout: %v", out)
	}
}

// TestUpstreamFailureClassesThroughMain: each way a call to a real MCP
// server fails is its run's class, on the answer's error and decision:
// the tool's isError tool_failed (tool_error), the server's -32602
// invalid_arguments, the run's deadline timeout (the call cancelled
// upstream: the server saw its context end), a server that cannot be
// reached upstream_unavailable. A slow call of the server delays no other
// call of it.
func TestUpstreamFailureClassesThroughMain(t *testing.T) {
	down := map[string]any{"down": map[string]any{"url": "http://127.0.0.1:1/mcp"}}
	downTool := []map[string]any{{"name": "down__get_jobs", "server": "down", "upstream_name": "get_jobs", "read_only": true}}
	s, record := serveJobs(t, map[string]any{"timeout": "1s", "max_concurrency": 4}, down, downTool, "--replay-timeout", "3s")

	failing := mustCaptureName(t, s, "return tools.jobs__fail_job(task_id=1)\n", "c1")
	e := mustFailWith(t, mustStatus(t, s.invoke(t, failing, automatic(map[string]any{"task_id": 1})), 200), "tool_failed", "tool_error")
	if !strings.Contains(e["message"].(string), "job log unavailable") {
		t.Fatalf("the tool's error: %v", e)
	}

	strict := mustCaptureName(t, s, "tools.jobs__pid()\nreturn tools.jobs__strict()\n", "c2")
	e = mustFailWith(t, mustStatus(t, s.invoke(t, strict, automatic(nil)), 200), "invalid_arguments", "invalid_arguments")
	if !strings.Contains(e["message"].(string), "refused the arguments") {
		t.Fatalf("the server's -32602: %v", e)
	}

	slow := mustCaptureName(t, s, "return tools.jobs__sleep(ms=ms)\n", "c3")
	fast := mustCaptureName(t, s, "return tools.jobs__greet(name=who)\n", "c4")
	answered := make(chan reply, 1)
	go func() { answered <- s.invoke(t, slow, automatic(map[string]any{"ms": 600000})) }()
	waitCall(t, record, "sleep", 1)
	// While the slow call runs, another call of its server is served.
	if out := mustStatus(t, s.invoke(t, fast, automatic(map[string]any{"who": "ann"})), 200); out["status"] != "succeeded" || out["result"] != "hello ann" {
		t.Fatalf("a call beside the slow one: %v", out)
	}
	mustFailWith(t, mustStatus(t, <-answered, 200), "timeout", "timeout")
	waitCall(t, record, "sleep:cancelled", 1)
	p := mustStatus(t, s.get(t, "/v1/procedures/"+slow), 200)
	if h, _ := p["health"].(map[string]any); h["last_failure_class"] != "timeout" {
		t.Fatalf("the health of a run that timed out: %v", p["health"])
	}

	gone := mustCaptureName(t, s, "return tools.down__get_jobs(task_id=1)\n", "c5")
	e = mustFailWith(t, mustStatus(t, s.invoke(t, gone, automatic(nil)), 200), "upstream_unavailable", "upstream_unavailable")
	if !strings.Contains(e["message"].(string), "server down:") {
		t.Fatalf("a server that cannot be reached: %v", e)
	}
}

// killMidCall starts an automatic invoke of name (a procedure that sleeps
// on the jobs server) and kills the server's process (SIGKILL) once the
// call reached it (its n-th sleep): the run fails upstream_unavailable.
func killMidCall(t *testing.T, s *server, record, name string, n int) {
	t.Helper()
	answered := make(chan reply, 1)
	go func() { answered <- s.invoke(t, name, automatic(map[string]any{"ms": 600000})) }()
	c := waitCall(t, record, "sleep", n)
	if err := syscall.Kill(c.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e := mustFailWith(t, mustStatus(t, <-answered, 200), "upstream_unavailable", "upstream_unavailable")
	if !strings.Contains(e["message"].(string), "broke during the call") {
		t.Fatalf("a call whose server was killed: %v", e)
	}
}

// waitConnected waits until serve's log holds n "connected" records of an
// upstream session (procgraph's supervision restarted the server).
func waitConnected(t *testing.T, s *server, n int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); strings.Count(s.logs.String(), "upstream MCP: connected") < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the upstream was not connected %d times:\n%s", n, s.logs.String())
		}
	}
}

// TestUpstreamKilledMidCall: the upstream process killed while a call is
// in flight: the call fails upstream_unavailable (it may have run: it is
// not sent again), procgraph's supervision starts the server again, and
// the next call is served by the new process.
func TestUpstreamKilledMidCall(t *testing.T) {
	s, record := serveJobs(t, nil, nil, nil, "--replay-timeout", "1m")
	name := mustCaptureName(t, s, "return tools.jobs__sleep(ms=ms)\n", "k1")
	waitConnected(t, s, 1)
	killMidCall(t, s, record, name, 1)
	waitConnected(t, s, 2)
	if out := mustStatus(t, s.invoke(t, name, automatic(map[string]any{"ms": 0})), 200); out["status"] != "succeeded" {
		t.Fatalf("the call after the restart: %v", out)
	}
	if sleeps := waitCall(t, record, "sleep", 2); sleeps.PID == waitCall(t, record, "sleep", 1).PID {
		t.Fatal("the next call was served by the killed process")
	}
	if n := strings.Count(strings.Join(calledTools(record), ","), "sleep"); n != 2 {
		t.Fatalf("the server received %d sleeps, want 2: a broken call was sent again", n)
	}
}

// TestUpstreamOutageDemotesNothing: three runs in a row that lose their
// server (killed mid-call) with --demote-after 3 demote nothing: the
// procedure is not demoted, an automatic invoke runs, and the next call is
// served. (One caller here; TestOutageDemotesNothing has two.)
func TestUpstreamOutageDemotesNothing(t *testing.T) {
	s, record := serveJobs(t, nil, nil, nil, "--replay-timeout", "1m", "--demote-after", "3")
	name := mustCaptureName(t, s, "return tools.jobs__sleep(ms=ms)\n", "o1")
	for i := 1; i <= 3; i++ {
		waitConnected(t, s, i)
		killMidCall(t, s, record, name, i)
	}
	p := mustStatus(t, s.get(t, "/v1/procedures/"+name), 200)
	if p["demoted"] != false { // (one tool: never exposed to planners, whatever its health)
		t.Fatalf("after three outages: demoted %v; want it not demoted", p["demoted"])
	}
	if out := mustStatus(t, s.invoke(t, name, automatic(map[string]any{"ms": 0})), 200); out["status"] != "succeeded" {
		t.Fatalf("the automatic invoke after the outages: %v", out)
	}
	if got := calledTools(record); slices.Index(got, "sleep") < 0 {
		t.Fatalf("the server received %v", got)
	}
}

// TestUpstreamProtocolFallbackThroughMain: a server that speaks only the
// oldest revision the SDK speaks refuses the newer ones and is offered
// that one (tools import and serve alike); serve logs the revision each
// server negotiated, and its calls are served.
func TestUpstreamProtocolFallbackThroughMain(t *testing.T) {
	all := mcp.SupportedProtocolVersions()
	oldest := all[len(all)-1]
	bin := buildMCPServer(t)
	file := writeUpstreams(t, map[string]any{"old": map[string]any{"command": bin, "env": map[string]string{"MCPTEST_PROTOCOLS": oldest}, "trust_annotations": true}})
	printed, _, _ := mustImportUpstreams(t, file)
	catFile := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(catFile, printed, 0o600); err != nil {
		t.Fatal(err)
	}
	s := mustServe(t, serverOpts{NoCatalogue: true, Extra: []string{"--tools", catFile, "--upstreams", file}})
	if !strings.Contains(s.logs.String(), `"server":"old","tools":12,"protocol_version":"`+oldest+`"`) {
		t.Fatalf("the negotiated revision is not logged:\n%s", s.logs.String())
	}
	name := mustCaptureName(t, s, "return tools.old__greet(name=who)\n", "p1")
	if out := mustStatus(t, s.invoke(t, name, automatic(map[string]any{"who": "old"})), 200); out["result"] != "hello old" {
		t.Fatalf("a call to a server on %s: %v", oldest, out)
	}
}

// TestHTTPUpstreamUnreachableThroughMain: with --upstream-http, a tool
// server that cannot be reached fails the run upstream_unavailable, not
// tool_error.
func TestHTTPUpstreamUnreachableThroughMain(t *testing.T) {
	s := mustServe(t, serverOpts{Extra: []string{"--upstream-http", "http://127.0.0.1:1/call"}})
	name := mustCaptureName(t, s, readOnlyCode, "h1")
	mustFailWith(t, mustStatus(t, s.invoke(t, name, automatic(map[string]any{"task_id": 1})), 200), "upstream_unavailable", "upstream_unavailable")
}
