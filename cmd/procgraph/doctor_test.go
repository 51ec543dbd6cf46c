package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/graph/embedded"
)

// mustMatchLines requires each pattern to match a line of out.
func mustMatchLines(tb testing.TB, out string, patterns ...string) {
	tb.Helper()
	for _, p := range patterns {
		if !regexp.MustCompile(`(?m)` + p).MatchString(out) {
			tb.Errorf("no line matches %s in:\n%s", p, out)
		}
	}
}

// TestDoctorHealthy: against a healthy running server every check is ok
// and is the server's, over its API — its store, the token's holder and
// scopes, its catalogue, its upstream, both MCP endpoints and its version
// (serverInfo.version) — not the flags given to doctor.
func TestDoctorHealthy(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	a := mustTurnServer(t, up)
	tokens := a.args[slicesIndex(a.args, "--tokens-file")+1]
	env := map[string]string{"PROCGRAPH_URL": a.URL, "PROCGRAPH_TOKEN": a.op}
	code, out, errOut := runMainWith(t, env, "doctor", "--data", a.Data, "--tokens-file", tokens, "--tools", catalogueFile(t),
		"--upstream-http", up.URL)
	if code != 0 || errOut != "" {
		t.Fatalf("doctor: exit %d, stderr %q\n%s", code, errOut, out)
	}
	mustMatchLines(t, out,
		fmt.Sprintf(`^ok\s+server\s+%s answers: checked over its API, not this machine's settings; console `, regexp.QuoteMeta(a.URL)),
		`^ok\s+store\s+the server's store answers \(/readyz\)$`,
		`^ok\s+auth\s+auth is on: the token is op's, with read, grant$`,
		`^ok\s+catalogue\s+the server's: \d+ tools, revision sha256:`,
		`^ok\s+upstream\s+\(unnamed\): unknown \(from /readyz; GET /v1/upstreams needs the admin scope for more\)$`,
		`^ok\s+mcp\s+/mcp \(automatic phase.*\): \d+ tools; procgraph devel, protocol 20`,
		`^ok\s+mcp\s+/mcp/interactive \(interactive phase.*\): \d+ tools; procgraph devel, protocol 20`,
		`^ok\s+version\s+the server runs procgraph devel, as this CLI$`)
	// Serve's settings given here are not the server's: not checked.
	if regexp.MustCompile(`(?m)^\S+\s+settings`).MatchString(out) || strings.Contains(out, "tokens in") || strings.Contains(out, "accepts connections") {
		t.Fatalf("doctor checked its own flags, not the running server:\n%s", out)
	}
	if strings.Contains(out, checkFail) || strings.Contains(out, a.op) {
		t.Fatalf("doctor failed a check or printed the token:\n%s", out)
	}
	code, out, _ = runMainWith(t, env, "doctor", "--data", a.Data, "--tokens-file", tokens, "--json")
	if code != 0 || !strings.Contains(out, `"ok": true`) || !strings.Contains(out, `"mode": "server"`) || !strings.Contains(out, `"check": "mcp"`) {
		t.Fatalf("doctor --json: exit %d\n%s", code, out)
	}

	// The same server without a token: MCP refuses, and doctor says so.
	code, out, _ = runMainWith(t, map[string]string{"PROCGRAPH_URL": a.URL, "PROCGRAPH_TOKEN": ""}, "doctor", "--data", a.Data, "--tokens-file", tokens)
	if code != 1 {
		t.Fatalf("doctor without a token: exit %d\n%s", code, out)
	}
	mustMatchLines(t, out, `^FAIL\s+mcp\s+/mcp: .*\(no token: set PROCGRAPH_TOKEN\)$`)
}

// slicesIndex is the index of v in xs, or -1.
func slicesIndex(xs []string, v string) int {
	for i, x := range xs {
		if x == v {
			return i
		}
	}
	return -1
}

// TestDoctorFailures: each failed check exits 1 and says why: a store
// another process holds with no server answering (named with its pid), an
// unreachable upstream, a missing catalogue.
func TestDoctorFailures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "p.db")
	st, err := embedded.Open(data, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	nobody := map[string]string{"PROCGRAPH_URL": "http://127.0.0.1:1"}
	badUpstreams, missingUpstreams := filepath.Join(dir, "bad.json"), filepath.Join(dir, "missing.json")
	for path, content := range map[string]string{
		badUpstreams:     `{"mcpServers": {"fs": {"command": "x", "timout": "3s"}}}`,
		missingUpstreams: `{"mcpServers": {"git": {"command": "procgraph-no-such-server"}}}`,
	} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	cases := []struct {
		name  string
		args  []string
		match string
	}{
		{"locked store", []string{"--data", data, "--auth", "off"},
			fmt.Sprintf(`^FAIL\s+store\s+%s is in use by pid %d \(.*\), and no procgraph answers at http://127.0.0.1:1: serve cannot open it`, regexp.QuoteMeta(data), os.Getpid())},
		{"unreachable upstream", []string{"--data", filepath.Join(dir, "new.db"), "--auth", "off", "--upstream-http", "http://127.0.0.1:1/call"},
			`^FAIL\s+upstream\s+--upstream-http http://127.0.0.1:1/call is unreachable: .*connection refused`},
		{"missing catalogue", []string{"--data", filepath.Join(dir, "new.db"), "--auth", "off", "--tools", filepath.Join(dir, "none.json")},
			`^FAIL\s+catalogue\s+--tools / PROCGRAPH_TOOLS: .*no such file`},
		{"upstreams file with an unknown key", []string{"--data", filepath.Join(dir, "new.db"), "--auth", "off", "--upstreams", badUpstreams},
			`^FAIL\s+upstream\s+--upstreams .*: line 1, column 40: mcpServers.fs: unknown key "timout" .*\(serve refuses to start\)`},
		{"upstreams command missing", []string{"--data", filepath.Join(dir, "new.db"), "--auth", "off", "--upstreams", missingUpstreams},
			`^FAIL\s+upstream\s+--upstreams: server "git": .*procgraph-no-such-server.*\(serve refuses to start\)`},
		{"bad setting", []string{"--data", filepath.Join(dir, "new.db"), "--max-call-bytes", "lots"},
			`^FAIL\s+settings\s+--max-call-bytes / PROCGRAPH_MAX_CALL_BYTES: `},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runMainWith(t, nobody, append([]string{"doctor"}, c.args...)...)
			if code != 1 || !strings.Contains(errOut, "a check failed") {
				t.Fatalf("exit %d, stderr %q\n%s", code, errOut, out)
			}
			mustMatchLines(t, out, c.match)
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "new.db")); err == nil {
		t.Fatal("doctor created a store file")
	}
}

// TestExportOfAServedStore: export of an embedded store a serve holds
// names the holder and points to exporting through the server, and
// --server does that.
func TestExportOfAServedStore(t *testing.T) {
	t.Parallel()
	s := mustServe(t, serverOpts{Upstream: mustUpstream(t)})
	name := mustCaptureName(t, s, readOnlyCode, "x")
	code, _, errOut := runMainWith(t, nil, "export", "--data", s.Data)
	if code != 1 || !strings.Contains(errOut, fmt.Sprintf("is in use by pid %d", os.Getpid())) || !strings.Contains(errOut, "procgraph export --server -o DUMP") {
		t.Fatalf("export of a served store: exit %d, %s", code, errOut)
	}
	dump := filepath.Join(t.TempDir(), "d.jsonl")
	code, _, errOut = runMainWith(t, map[string]string{"PROCGRAPH_URL": s.URL}, "export", "--server", "-o", dump)
	if code != 0 || !strings.Contains(errOut, "exported the store of the server at "+s.URL) {
		t.Fatalf("export --server: exit %d, %s", code, errOut)
	}
	b, err := os.ReadFile(dump)
	if err != nil || !strings.Contains(string(b), name) || !strings.Contains(string(b), `"trailer"`) {
		t.Fatalf("the dump (%v) lacks the procedure or its trailer:\n%.300s", err, b)
	}
}

// TestExportThroughServerChecksTheDump: export --server reads what arrives
// back as a dump. An answer cut short at a line's end (a clean HTTP answer,
// as a proxy or a server dying mid-stream can give) or with a line altered
// is refused with a non-zero exit, and nothing is left at the path.
func TestExportThroughServerChecksTheDump(t *testing.T) {
	t.Parallel()
	s := mustServe(t, serverOpts{Upstream: mustUpstream(t)})
	mustCaptureName(t, s, readOnlyCode, "x")
	whole := mustStatusBody(t, s.get(t, "/v1/export"), 200)
	lines := strings.SplitAfter(string(whole), "\n")
	if len(lines) < 3 {
		t.Fatalf("the export has %d lines", len(lines))
	}
	cases := []struct {
		name string
		body string
	}{
		{"cut after the header", lines[0]},
		{"cut before the trailer", strings.Join(lines[:len(lines)-2], "")},
		{"a record altered", strings.Replace(string(whole), `"frequency":1`, `"frequency":9`, 1)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.body == string(whole) {
				t.Fatal("the case changes nothing")
			}
			proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/x-ndjson")
				io.WriteString(w, tc.body)
			}))
			t.Cleanup(proxy.Close)
			path := filepath.Join(t.TempDir(), "d.jsonl")
			code, _, errOut := runMainWith(t, map[string]string{"PROCGRAPH_URL": proxy.URL}, "export", "--server", "-o", path)
			if code != 1 || !strings.Contains(errOut, "not a whole dump") {
				t.Fatalf("export --server of a broken answer: exit %d, %s", code, errOut)
			}
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("a file was left at the path: %v", err)
			}
			if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 0 {
				t.Fatalf("files were left beside it: %v", entries)
			}
			code, _, errOut = runMainWith(t, map[string]string{"PROCGRAPH_URL": proxy.URL}, "export", "--server")
			if code != 1 || !strings.Contains(errOut, "not a whole dump") {
				t.Fatalf("export --server to stdout of a broken answer: exit %d, %s", code, errOut)
			}
		})
	}
}

// TestDoctorNeo4jWrongPassword: a wrong Neo4j password is named as an
// authentication failure, not as an unreachable store. It needs a Neo4j
// server (NEO4J_URI; CI sets it): skipped locally without one, failed
// under CI=true.
func TestDoctorNeo4jWrongPassword(t *testing.T) {
	t.Parallel()
	uri := neo4jEnv["NEO4J_URI"]
	if uri == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true and NEO4J_URI is not set (.ci/run starts a Neo4j server)")
		}
		t.Skip("NEO4J_URI is not set: no Neo4j server to refuse a password")
	}
	// A user the server does not have: refused like a wrong password, and
	// failed logins never lock the suite's own user out (Neo4j locks a user
	// after dbms.security.auth_max_failed_attempts) while graph/neo4j's
	// tests run beside this one.
	env := map[string]string{"NEO4J_URI": uri, "NEO4J_USERNAME": "procgraph-doctor-nobody",
		"NEO4J_PASSWORD": neo4jEnv["NEO4J_PASSWORD"] + "-wrong", "PROCGRAPH_URL": "http://127.0.0.1:1"}
	code, out, _ := runMainWith(t, env, "doctor", "--store", "neo4j", "--tokens-file", filepath.Join(t.TempDir(), "tokens.json"))
	if code != 1 {
		t.Fatalf("doctor with a wrong password: exit %d\n%s", code, out)
	}
	mustMatchLines(t, out, `^FAIL\s+neo4j\s+opening Neo4j at .*: neo4j: authentication failed: the server at .* refused the username and password`)
	if strings.Contains(out, "cannot be reached") || strings.Contains(out, env["NEO4J_PASSWORD"]) {
		t.Fatalf("doctor named an outage, or printed the password:\n%s", out)
	}
}
