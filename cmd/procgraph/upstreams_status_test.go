package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procgraph/procgraph/api"
	"github.com/procgraph/procgraph/mcpdispatch"
)

// downableServer writes a script that runs the MCP server bin with the
// script's arguments, writing its pid to the file it returns, unless the down file it returns
// exists: then it exits at once, as a server that cannot start.
func downableServer(t *testing.T, bin string) (script, pidFile, downFile string) {
	t.Helper()
	dir := t.TempDir()
	script, pidFile, downFile = filepath.Join(dir, "server.sh"), filepath.Join(dir, "pid"), filepath.Join(dir, "down")
	body := fmt.Sprintf("#!/bin/sh\n[ -e %q ] && exit 1\necho $$ > %q\nexec %q \"$@\"\n", downFile, pidFile, bin)
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	return script, pidFile, downFile
}

// readiness reads /readyz.
func readiness(t *testing.T, s *server) (int, api.Readiness) {
	t.Helper()
	r := s.send(t, req{Method: "GET", Path: "/readyz", Token: new(string)})
	var out api.Readiness
	r.Into(t, &out)
	return r.Status, out
}

// waitReadiness polls /readyz until want holds (failing after a minute:
// a bound against a hang, not a measure).
func waitReadiness(t *testing.T, s *server, what string, want func(api.Readiness) bool) api.Readiness {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		_, out := readiness(t, s)
		if want(out) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz never showed %s: %+v\n%s", what, out, s.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stateOf is server key's state in states.
func stateOf(states []mcpdispatch.ServerState, key string) string {
	for _, s := range states {
		if s.Server == key {
			return s.State
		}
	}
	return "(absent)"
}

// upstreamsOfServer reads GET /v1/upstreams with the server's token.
func upstreamsOfServer(t *testing.T, s *server, query string) map[string]mcpdispatch.ServerStatus {
	t.Helper()
	var out api.UpstreamsAnswer
	mustStatusReply(t, s.get(t, "/v1/upstreams"+query), 200).Into(t, &out)
	by := map[string]mcpdispatch.ServerStatus{}
	for _, u := range out.Upstreams {
		by[u.Server] = u
	}
	return by
}

// mustStatusReply requires r's status.
func mustStatusReply(t *testing.T, r reply, status int) reply {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	return r
}

// TestUpstreamsSeenThroughMain: two MCP servers under one serve. /readyz
// names each one's state: ok, then degraded overall with the killed one
// down (its restart fails), then ok again once it can start; /metrics
// counts calls, errors by class and latency per server and tool, and each
// server's state; GET /v1/upstreams (admin scope: an agent token is
// refused) lists transport, state, negotiated revision, tool counts and
// the last failure's class, never a command line or an environment value,
// and refuses malformed filters with a 400 naming the parameter;
// `procgraph upstreams` prints it as a table; `procgraph doctor` checks
// the running server's upstreams over its API.
func TestUpstreamsSeenThroughMain(t *testing.T) {
	bin := buildMCPServer(t)
	script, pidFile, downFile := downableServer(t, bin)
	const secret = "env-value-never-shown"
	file := writeUpstreams(t, map[string]any{
		"jobs": map[string]any{"command": script, "trust_annotations": true},
		"math": map[string]any{"command": bin, "env": map[string]string{"MCPTEST_NAME": secret}, "trust_annotations": true, "prefix": "m"},
	})
	printed, _, _ := mustImportUpstreams(t, file)
	catFile := filepath.Join(t.TempDir(), "catalogue.json")
	if err := os.WriteFile(catFile, printed, 0o600); err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(t.TempDir(), "tokens.json")
	op := mustCreateToken(t, tokens, "op", "read,capture,invoke,grant,admin")
	agent := mustCreateToken(t, tokens, "agent", "read,capture,invoke")
	s := mustServe(t, serverOpts{NoCatalogue: true, TokensFile: tokens, Extra: []string{"--tools", catFile, "--upstreams", file}})
	s.token = op

	// Both up.
	status, ready := readiness(t, s)
	if status != 200 || ready.Status != "ok" || ready.Store != "ok" || stateOf(ready.Upstreams, "jobs") != "ok" || stateOf(ready.Upstreams, "math") != "ok" {
		t.Fatalf("/readyz with both servers up: %d %+v", status, ready)
	}
	r := mustStatusReply(t, s.get(t, "/v1/upstreams"), 200)
	for _, leak := range []string{script, bin, secret, filepath.Dir(script)} {
		if strings.Contains(string(r.Body), leak) {
			t.Fatalf("GET /v1/upstreams shows %q:\n%s", leak, r.Body)
		}
	}
	ups := upstreamsOfServer(t, s, "")
	for _, key := range []string{"jobs", "math"} {
		u := ups[key]
		if u.Transport != "stdio" || u.State != "ok" || u.ProtocolVersion == nil || *u.ProtocolVersion == "" || u.ToolsInCatalogue != mcptestTools ||
			u.ToolsListed == nil || *u.ToolsListed != mcptestTools || u.LastErrorClass != nil || u.ConnectionFailures != 0 {
			t.Fatalf("GET /v1/upstreams: %s is %+v", key, u)
		}
	}
	if got := upstreamsOfServer(t, s, "?server=math"); len(got) != 1 || got["math"].Server != "math" {
		t.Fatalf("?server=math: %+v", got)
	}

	// The scope: an operator's read (admin); an agent's token is refused.
	if r := s.send(t, req{Method: "GET", Path: "/v1/upstreams", Token: &agent}); r.Status != 403 || !strings.Contains(string(r.Body), `"scope":"admin"`) {
		t.Fatalf("GET /v1/upstreams with the agent's token: %d %s", r.Status, r.Body)
	}
	if r := s.send(t, req{Method: "GET", Path: "/v1/upstreams", Token: new(string)}); r.Status != 401 {
		t.Fatalf("GET /v1/upstreams without a token: %d %s", r.Status, r.Body)
	}
	// Malformed filters: a 400 naming the parameter.
	for query, want := range map[string]string{
		"?state=bogus":        `query parameter \"state\" is not one of ok, degraded, down, unknown`,
		"?state=":             `query parameter \"state\" must not be empty`,
		"?server=a%20b":       `query parameter \"server\": server key \"a b\" is not`,
		"?server=":            `query parameter \"server\" must not be empty`,
		"?servers=jobs":       `unknown query parameter \"servers\"`,
		"?state=ok&state=%ff": `query parameter \"state\" is too long or not UTF-8`,
	} {
		r := s.get(t, "/v1/upstreams"+query)
		if r.Status != 400 || !strings.Contains(string(r.Body), want) || !strings.Contains(string(r.Body), `"code":"invalid_request"`) {
			t.Errorf("GET /v1/upstreams%s: %d %s (want 400 with %s)", query, r.Status, r.Body, want)
		}
	}

	// Calls on both servers are counted per server and tool.
	code := "a = tools.jobs__get_jobs(task_id=task_id)\nb = tools.m__get_sum(a=task_id, b=1)\nreturn [a, b]\n"
	name := mustCaptureName(t, s, code, "seen-1")
	for range 2 {
		if out := mustStatus(t, s.invoke(t, name, map[string]any{"arguments": map[string]any{"task_id": 3}, "phase": "automatic"}), 200); out["status"] != "succeeded" {
			t.Fatalf("invoke across both servers: %v", out)
		}
	}
	metrics := string(mustStatusReply(t, s.send(t, req{Method: "GET", Path: "/metrics", Token: new(string)}), 200).Body)
	for _, m := range []struct{ name, labels string }{
		{"procgraph_upstream_calls_total", `server="jobs",tool="jobs__get_jobs"`},
		{"procgraph_upstream_calls_total", `server="math",tool="m__get_sum"`},
		{"procgraph_upstream_call_duration_seconds_count", `server="jobs",tool="jobs__get_jobs"`},
		{"procgraph_upstream_call_duration_seconds_count", `server="math",tool="m__get_sum"`},
	} {
		if v := metricValue(metrics, m.name+"{"+m.labels+"}"); v != 2 {
			t.Errorf("%s{%s} = %v, want 2", m.name, m.labels, v)
		}
	}
	for _, key := range []string{"jobs", "math"} {
		if v := metricValue(metrics, `procgraph_upstream_state{server="`+key+`",state="ok"}`); v != 1 {
			t.Errorf("procgraph_upstream_state of %s: %v", key, v)
		}
	}
	if strings.Contains(metrics, "procgraph_upstream_call_errors_total{") {
		t.Fatalf("errors counted while every call answered:\n%s", grepLines(metrics, "procgraph_upstream"))
	}

	// The doctor, against the running server: its upstreams over the API.
	env := map[string]string{"PROCGRAPH_URL": s.URL, "PROCGRAPH_TOKEN": op}
	dcode, dout, _ := runMainWith(t, env, "doctor")
	if dcode != 0 {
		t.Fatalf("doctor with both servers up: exit %d\n%s", dcode, dout)
	}
	mustMatchLines(t, dout,
		`^ok\s+upstream\s+jobs: ok, stdio, MCP 20\d\d-\d\d-\d\d, 12 tools in the catalogue, 12 listed$`,
		`^ok\s+upstream\s+math: ok, stdio, MCP 20\d\d-\d\d-\d\d, 12 tools in the catalogue, 12 listed$`)

	// jobs is killed and cannot start again: degraded overall, jobs down.
	pid, err := strconv.Atoi(strings.TrimSpace(string(mustRead(t, pidFile))))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(downFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Down from its first failed attempt to start again: waited for as
	// that attempt, so a server reported otherwise is seen at once.
	for deadline := time.Now().Add(time.Minute); upstreamsOfServer(t, s, "?server=jobs")["jobs"].ConnectionFailures < 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no failed attempt to start jobs again:\n%s", s.logs.String())
		}
	}
	if _, ready = readiness(t, s); stateOf(ready.Upstreams, "jobs") != "down" {
		t.Fatalf("/readyz after jobs failed to start again: %+v", ready)
	}
	if status, ready = readiness(t, s); status != 200 || ready.Status != "degraded" || ready.Store != "ok" || stateOf(ready.Upstreams, "math") != "ok" {
		t.Fatalf("/readyz with jobs down: %d %+v", status, ready)
	}
	out := mustStatus(t, s.invoke(t, name, map[string]any{"arguments": map[string]any{"task_id": 3}, "phase": "automatic"}), 200)
	if out["status"] != "failed" {
		t.Fatalf("invoke with jobs down: %v", out)
	}
	ups = upstreamsOfServer(t, s, "?state=down")
	jobs, ok := ups["jobs"]
	if len(ups) != 1 || !ok || jobs.State != "down" || jobs.ProtocolVersion != nil || jobs.ConnectionFailures < 1 || jobs.LastErrorClass == nil || jobs.LastErrorAt == nil {
		t.Fatalf("GET /v1/upstreams?state=down with jobs down: %+v", ups)
	}
	class := *jobs.LastErrorClass
	metrics = string(s.send(t, req{Method: "GET", Path: "/metrics", Token: new(string)}).Body)
	if v := metricValue(metrics, `procgraph_upstream_call_errors_total{class="`+class+`",server="jobs",tool="jobs__get_jobs"}`); v != 1 {
		t.Fatalf("the failed call is not counted under its class %s:\n%s", class, grepLines(metrics, "procgraph_upstream"))
	}
	if v := metricValue(metrics, `procgraph_upstream_state{server="jobs",state="down"}`); v != 1 {
		t.Fatalf("procgraph_upstream_state of jobs down:\n%s", grepLines(metrics, "procgraph_upstream_state"))
	}
	ccode, cout, cerr := runMainWith(t, env, "upstreams")
	if ccode != 0 {
		t.Fatalf("procgraph upstreams: exit %d: %s", ccode, cerr)
	}
	mustMatchLines(t, cout,
		`^SERVER\s+TRANSPORT\s+STATE\s+PROTOCOL\s+CATALOGUE TOOLS\s+LISTED\s+LAST ERROR$`,
		`^jobs\s+stdio\s+down \(\d+ failed attempts\)\s+-\s+12\s+12\s+`+regexp.QuoteMeta(class)+` at 20\d\d-`,
		`^math\s+stdio\s+ok\s+20\d\d-\d\d-\d\d\s+12\s+12\s+-$`,
		`^2 server\(s\) shown; overall: degraded$`)
	if strings.Contains(cout, secret) || strings.Contains(cout, script) {
		t.Fatalf("procgraph upstreams shows a command or an environment value:\n%s", cout)
	}
	dcode, dout, _ = runMainWith(t, env, "doctor")
	if dcode != 1 {
		t.Fatalf("doctor with jobs down: exit %d\n%s", dcode, dout)
	}
	mustMatchLines(t, dout, `^FAIL\s+upstream\s+jobs: down after \d+ failed connection attempts, its calls fail at once; last failed call: `+regexp.QuoteMeta(class))

	// jobs can start again: ok, without a restart of procgraph.
	if err := os.Remove(downFile); err != nil {
		t.Fatal(err)
	}
	waitReadiness(t, s, "ok again", func(r api.Readiness) bool { return r.Status == "ok" && stateOf(r.Upstreams, "jobs") == "ok" })
	if out := mustStatus(t, s.invoke(t, name, map[string]any{"arguments": map[string]any{"task_id": 3}, "phase": "automatic"}), 200); out["status"] != "succeeded" {
		t.Fatalf("invoke once jobs is back: %v", out)
	}
}

// mustRead reads a file.
func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// grepLines is the lines of text that contain s.
func grepLines(text, s string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestRealUpstreamsSeen: procgraph in front of server-filesystem and
// mcp-server-git as installed from the registries. GET /v1/upstreams names
// the revision each negotiated and as many listed tools as the catalogue
// routes to it; a call on each is counted per server and tool; the git
// server killed (and kept from starting) makes /readyz degraded with git
// down, and once it can start again /readyz is ok and its tools answer,
// procgraph never restarted.
func TestRealUpstreamsSeen(t *testing.T) {
	servers := realUpstreams(t)
	files, repo := mustUpstreamDirs(t, "seen\n")
	dir := t.TempDir()
	gitScript, pidFile, downFile := downableServer(t, servers["git"][0])
	file := writeUpstreams(t, map[string]any{
		"fs":  map[string]any{"command": servers["fs"][0], "args": append(servers["fs"][1:], files), "trust_annotations": true},
		"git": map[string]any{"command": gitScript, "args": []string{"--repository", repo}, "trust_annotations": true},
	})
	printed, imported, _ := mustImportUpstreams(t, file)
	perServer := map[string]int{}
	for _, tl := range imported {
		perServer[tl.Server]++
	}
	catFile := filepath.Join(dir, "tools.json")
	if err := os.WriteFile(catFile, printed, 0o600); err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(dir, "tokens.json")
	op := mustCreateToken(t, tokens, "op", "read,capture,invoke,grant,admin")
	s := mustServe(t, serverOpts{NoCatalogue: true, TokensFile: tokens, Extra: []string{"--tools", catFile, "--upstreams", file}})
	s.token = op

	waitReadiness(t, s, "both servers ok", func(r api.Readiness) bool { return r.Status == "ok" && len(r.Upstreams) == 2 })
	ups := upstreamsOfServer(t, s, "")
	for _, key := range []string{"fs", "git"} {
		u := ups[key]
		if u.State != "ok" || u.Transport != "stdio" || u.ProtocolVersion == nil || u.ToolsInCatalogue != perServer[key] || u.ToolsInCatalogue < 10 {
			t.Fatalf("%s: %+v (imported %d)", key, u, perServer[key])
		}
		if u.ToolsListed != nil && *u.ToolsListed != perServer[key] {
			t.Fatalf("%s listed %d tools, the catalogue has %d", key, *u.ToolsListed, perServer[key])
		}
	}
	code := "text = tools.fs__read_text_file(path=path)\nstatus = tools.git__git_status(repo_path=repo)\nreturn [text, status]\n"
	name := mustCaptureName(t, s, code, "real-seen")
	args := map[string]any{"path": filepath.Join(files, "note.txt"), "repo": repo}
	if out := mustStatus(t, s.invoke(t, name, map[string]any{"arguments": args, "phase": "automatic"}), 200); out["status"] != "succeeded" {
		t.Fatalf("invoke: %v", out)
	}
	metrics := string(s.send(t, req{Method: "GET", Path: "/metrics", Token: new(string)}).Body)
	for _, series := range []string{`procgraph_upstream_calls_total{server="fs",tool="fs__read_text_file"}`, `procgraph_upstream_calls_total{server="git",tool="git__git_status"}`} {
		if v := metricValue(metrics, series); v != 1 {
			t.Errorf("%s = %v", series, v)
		}
	}

	pid, err := strconv.Atoi(strings.TrimSpace(string(mustRead(t, pidFile))))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(downFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ready := waitReadiness(t, s, "git down", func(r api.Readiness) bool { return stateOf(r.Upstreams, "git") == "down" })
	if ready.Status != "degraded" || stateOf(ready.Upstreams, "fs") != "ok" {
		t.Fatalf("/readyz with git down: %+v", ready)
	}
	if err := os.Remove(downFile); err != nil {
		t.Fatal(err)
	}
	waitReadiness(t, s, "ok again", func(r api.Readiness) bool { return r.Status == "ok" })
	if out := mustStatus(t, s.invoke(t, name, map[string]any{"arguments": args, "phase": "automatic"}), 200); out["status"] != "succeeded" {
		t.Fatalf("invoke once git is back: %v", out)
	}
}

// mcptestTools is how many tools the test MCP server (testdata/mcptest) lists.
const mcptestTools = 12
