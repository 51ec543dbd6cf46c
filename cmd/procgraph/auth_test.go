package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runMain runs Main to completion and returns its exit code, stdout and stderr.
func runMain(tb testing.TB, args ...string) (int, string, string) {
	tb.Helper()
	var stdout, stderr bytes.Buffer
	code := runCLI(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// mustCreateToken runs `procgraph token create` and returns the token.
func mustCreateToken(tb testing.TB, file, name, scopes string) string {
	tb.Helper()
	code, out, errOut := runMain(tb, "token", "create", "--name", name, "--scopes", scopes, "--tokens-file", file)
	if code != 0 {
		tb.Fatalf("token create %s: exit %d: %s", name, code, errOut)
	}
	token := strings.TrimSpace(out)
	if strings.Count(out, "\n") != 1 || !strings.HasPrefix(token, "pgt_") {
		tb.Fatalf("token create printed %q", out)
	}
	return token
}

// TestTokenCreate checks that a token is printed once and only its hash is
// stored, in a 0600 file, and the command's errors.
func TestTokenCreate(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "tokens.json")
	alice := mustCreateToken(t, file, "alice", "read,grant")
	bob := mustCreateToken(t, file, "bob", "admin")
	st, err := os.Stat(file)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("tokens file mode %v, %v; want 0600", st.Mode(), err)
	}
	raw, _ := os.ReadFile(file)
	for _, tok := range []string{alice, bob, strings.TrimPrefix(alice, "pgt_")} {
		if strings.Contains(string(raw), tok) {
			t.Fatalf("the tokens file holds a token in clear: %s", raw)
		}
	}
	var f struct {
		Tokens []struct {
			Name   string   `json:"name"`
			SHA256 string   `json:"sha256"`
			Scopes []string `json:"scopes"`
		} `json:"tokens"`
	}
	if err := json.Unmarshal(raw, &f); err != nil || len(f.Tokens) != 2 {
		t.Fatalf("tokens file %s: %v", raw, err)
	}
	sum := sha256.Sum256([]byte(alice))
	if f.Tokens[0].Name != "alice" || f.Tokens[0].SHA256 != hex.EncodeToString(sum[:]) || strings.Join(f.Tokens[0].Scopes, ",") != "read,grant" {
		t.Fatalf("alice's entry %+v", f.Tokens[0])
	}
	if alice == bob {
		t.Fatal("two tokens are equal")
	}
	entries, _ := os.ReadDir(filepath.Dir(file))
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}

	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"duplicate holder", []string{"--name", "alice", "--scopes", "read"}, 1, "alice"},
		{"unknown scope", []string{"--name", "carol", "--scopes", "read,root"}, 2, "root"},
		{"bad holder name", []string{"--name", "carol smith", "--scopes", "read"}, 1, "name"},
		{"no scopes", []string{"--name", "carol"}, 2, "usage"},
		{"no name", []string{"--scopes", "read"}, 2, "usage"},
		{"stray argument", []string{"--name", "carol", "--scopes", "read", "extra"}, 2, "usage"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runMain(t, append([]string{"token", "create", "--tokens-file", file}, tc.args...)...)
			if code != tc.code || out != "" || !strings.Contains(errOut, tc.msg) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, out, errOut, tc.code, tc.msg)
			}
		})
	}
	after, _ := os.ReadFile(file)
	if !bytes.Equal(after, raw) {
		t.Fatal("a failed token create changed the file")
	}
	t.Run("a broken tokens file is not overwritten", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "tokens.json")
		os.WriteFile(bad, []byte("{not json"), 0o600)
		code, _, errOut := runMain(t, "token", "create", "--name", "x", "--scopes", "read", "--tokens-file", bad)
		if code == 0 || !strings.Contains(errOut, "tokens") {
			t.Fatalf("exit %d, %s", code, errOut)
		}
		if b, _ := os.ReadFile(bad); string(b) != "{not json" {
			t.Fatalf("the broken file was overwritten: %s", b)
		}
	})
}

// TestAuthMatrix checks every scope against every route class, missing and
// wrong tokens, the actor of decisions, and the open operations endpoints.
func TestAuthMatrix(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "tokens.json")
	scopes := []string{"read", "capture", "invoke", "grant", "admin"}
	tokens := map[string]string{}
	for _, sc := range scopes {
		tokens[sc] = mustCreateToken(t, file, "holder-"+sc, sc)
	}
	tokens["all"] = mustCreateToken(t, file, "root", "read,capture,invoke,grant,admin")
	tokens["invoke+grant"] = mustCreateToken(t, file, "operator", "invoke,grant")
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up, TokensFile: file, AllowMutating: true, Extra: []string{"--addr", "0.0.0.0:0"}})
	s.URL = strings.Replace(s.URL, "0.0.0.0", "127.0.0.1", 1)
	s.URL = strings.Replace(s.URL, "[::]", "127.0.0.1", 1)
	s.token = tokens["all"]
	mustCaptureName(t, s, readOnlyCode, "setup")
	mustCaptureName(t, s, killCode, "setup")
	hash := procOf(t, map[string]any{"procedure": s.get(t, "/v1/procedures/"+readOnlyName).JSON(t)})["code_hash"].(string)
	var cat struct {
		Tools []map[string]any `json:"tools"`
	}
	s.get(t, "/v1/tools").Into(t, &cat)

	routes := []struct {
		class string
		req   req
	}{
		{"read", req{Method: "GET", Path: "/v1/tools"}},
		{"read", req{Method: "GET", Path: "/v1/procedures?limit=5"}},
		{"read", req{Method: "GET", Path: "/v1/procedures/tools"}},
		{"read", req{Method: "GET", Path: "/v1/procedures/" + readOnlyName}},
		{"read", req{Method: "GET", Path: "/v1/procedures/" + readOnlyName + "/versions"}},
		{"read", req{Method: "GET", Path: "/v1/causes"}},
		{"read", req{Method: "GET", Path: "/v1/causes/none"}},
		{"read", req{Method: "GET", Path: "/v1/graph?procedure=" + readOnlyName}},
		{"read", req{Method: "GET", Path: "/v1/decisions"}},
		{"capture", req{Method: "POST", Path: "/v1/procedures", Body: map[string]any{"code": readOnlyCode}}},
		{"invoke", req{Method: "POST", Path: "/v1/procedures/" + readOnlyName + "/invoke", Body: map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "automatic"}}},
		{"grant", req{Method: "PUT", Path: "/v1/procedures/" + readOnlyName + "/auto-run", Body: map[string]any{"enabled": true}}},
		{"grant", req{Method: "DELETE", Path: "/v1/procedures/" + readOnlyName + "/auto-run"}},
		{"grant", req{Method: "POST", Path: "/v1/procedures/" + readOnlyName + "/versions/" + hash + "/promote"}},
		{"admin", req{Method: "PUT", Path: "/v1/tools", Body: map[string]any{"tools": cat.Tools}}},
	}
	for _, holder := range append(scopes, "all") {
		for _, rt := range routes {
			t.Run(holder+" "+rt.req.Method+" "+rt.req.Path, func(t *testing.T) {
				q := rt.req
				q.Token = ptr(tokens[holder])
				r := s.send(t, q)
				if holder == rt.class || holder == "all" {
					if r.Status == 401 || r.Status == 403 {
						t.Fatalf("scope %s refused: %d %s", holder, r.Status, r.Body)
					}
					if r.Status >= 300 && !(r.Status == 404 && strings.Contains(q.Path, "/causes/none")) {
						t.Fatalf("scope %s: %d %s", holder, r.Status, r.Body)
					}
				} else {
					d := mustError(t, r, 403, "forbidden")
					if d["scope"] != rt.class {
						t.Fatalf("details.scope = %v, want %s", d["scope"], rt.class)
					}
				}
			})
		}
	}
	t.Run("missing or wrong token", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			header string
		}{
			{"no header", ""},
			{"wrong token", "Bearer pgt_wrong"},
			{"hash instead of token", "Bearer " + hex.EncodeToString(sha256.New().Sum(nil))},
			{"basic scheme", "Basic " + tokens["all"]},
			{"empty bearer", "Bearer "},
			{"no scheme", tokens["all"]},
			{"token with a suffix", "Bearer " + tokens["all"] + "x"},
			{"token prefix", "Bearer " + tokens["all"][:20]},
		} {
			t.Run(tc.name, func(t *testing.T) {
				for _, rt := range routes {
					q := rt.req
					q.Token = ptr("")
					q.Header = map[string]string{"Authorization": tc.header}
					r := s.send(t, q)
					mustError(t, r, 401, "unauthorized")
					if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
						t.Fatalf("401 without WWW-Authenticate: %v", r.Header)
					}
				}
			})
		}
		// The scheme is case-insensitive.
		mustStatus(t, s.send(t, req{Method: "GET", Path: "/v1/tools", Token: ptr(""), Header: map[string]string{"Authorization": "bearer " + tokens["read"]}}), 200)
	})
	t.Run("operations endpoints need no token", func(t *testing.T) {
		for _, path := range []string{"/healthz", "/readyz", "/metrics", "/openapi.json"} {
			r := s.send(t, req{Method: "GET", Path: path, Token: ptr("")})
			if r.Status != 200 {
				t.Fatalf("%s without a token: %d %s", path, r.Status, r.Body)
			}
		}
	})
	t.Run("the actor is the token holder", func(t *testing.T) {
		grant := mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/procedures/" + readOnlyName + "/auto-run", Body: map[string]any{"enabled": true, "reason": "r"}, Token: ptr(tokens["grant"])}), 200)
		if grant["decision"].(map[string]any)["actor"] != "holder-grant" || procOf(t, grant)["auto_run"].(map[string]any)["granted_by"] != "holder-grant" {
			t.Fatalf("grant actor %v", grant)
		}
		inv := mustStatus(t, s.send(t, req{Method: "POST", Path: "/v1/procedures/" + readOnlyName + "/invoke", Body: map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "automatic"}, Token: ptr(tokens["invoke"])}), 200)
		if inv["decision"].(map[string]any)["actor"] != "holder-invoke" {
			t.Fatalf("invoke actor %v", inv["decision"])
		}
		ds := s.decisions(t, "limit=2")
		if ds[0]["actor"] != "holder-invoke" || ds[1]["actor"] != "holder-grant" {
			t.Fatalf("decisions %v", ds)
		}
	})
	t.Run("reviewed_by counts only from a grant-scoped caller", func(t *testing.T) {
		body := map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "interactive", "reviewed_by": "someone"}
		up.reset()
		d := mustError(t, s.send(t, req{Method: "POST", Path: "/v1/procedures/" + killName + "/invoke", Body: body, Token: ptr(tokens["invoke"])}), 403, "denied")
		if d["decision"].(map[string]any)["reason"] != "review_required" {
			t.Fatalf("invoke-only reviewer: %v", d)
		}
		up.mustSeeNothing(t, "review_required")
		out := mustStatus(t, s.send(t, req{Method: "POST", Path: "/v1/procedures/" + killName + "/invoke", Body: body, Token: ptr(tokens["invoke+grant"])}), 200)
		if dd := out["decision"].(map[string]any); dd["reason"] != "operator_reviewed" || dd["actor"] != "operator" {
			t.Fatalf("invoke+grant reviewer: %v", dd)
		}
	})
}

// TestRefuseToStart checks that invalid configuration refuses to start,
// with a non-zero exit code and a message naming the setting.
func TestRefuseToStart(t *testing.T) {
	dir := t.TempDir()
	write := fileWriter(t, dir)
	notJSON := write("notjson.json", "{")
	badScope := write("badscope.json", `{"tokens": [{"name": "a", "sha256": "`+strings.Repeat("a", 64)+`", "scopes": ["root"]}]}`)
	badHash := write("badhash.json", `{"tokens": [{"name": "a", "sha256": "abc", "scopes": ["read"]}]}`)
	extraField := write("extra.json", `{"tokens": [], "admin": true}`)
	noTokens := write("notokens.json", `{"tokens": []}`)
	noKey := write("nokey.json", `{}`)
	emptyFile := write("empty.json", "")
	badCat := write("badcat.json", `{"tools": [{"name": "a"}, {"name": "a"}]}`)
	data := filepath.Join(dir, "p.db")
	base := []string{"serve", "--data", data, "--sandbox-workers", "1"}
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want []string
	}{
		{"auth off on a public address", []string{"--addr", "0.0.0.0:0", "--auth", "off"}, nil, []string{"--addr", "loopback", "--auth off"}},
		{"auth off on a public address (env)", nil, map[string]string{"PROCGRAPH_ADDR": "0.0.0.0:0", "PROCGRAPH_AUTH": "off"}, []string{"loopback", "PROCGRAPH_AUTH=off"}},
		{"auth off on a public IPv6 address", []string{"--addr", "[::]:0", "--auth", "off"}, nil, []string{"loopback"}},
		{"auth unknown", []string{"--auth", "none"}, nil, []string{"--auth", "none"}},
		{"auth unknown (env)", nil, map[string]string{"PROCGRAPH_AUTH": "false"}, []string{"PROCGRAPH_AUTH", "false"}},
		{"auth off with a tokens file", []string{"--auth", "off", "--tokens-file", badHash}, nil, []string{"--auth off", "--tokens-file", "exclusive"}},
		{"neo4j with a relative tokens file", []string{"--tokens-file", "tokens.json"}, map[string]string{"NEO4J_URI": "bolt://127.0.0.1:1"}, []string{"--tokens-file", "absolute"}},
		{"mutating autorun yes (env)", nil, map[string]string{"PROCGRAPH_ALLOW_MUTATING_AUTORUN": "yes"}, []string{"PROCGRAPH_ALLOW_MUTATING_AUTORUN", "yes"}},
		{"mutating autorun 1 (flag)", []string{"--allow-mutating-autorun", "1"}, nil, []string{"--allow-mutating-autorun"}},
		{"mutating autorun TRUE (env)", nil, map[string]string{"PROCGRAPH_ALLOW_MUTATING_AUTORUN": "TRUE"}, []string{"PROCGRAPH_ALLOW_MUTATING_AUTORUN"}},
		{"unknown store", []string{"--store", "bogus"}, nil, []string{"--store", "bogus"}},
		{"unknown store (env)", nil, map[string]string{"PROCGRAPH_STORE": "mysql"}, []string{"PROCGRAPH_STORE", "mysql"}},
		{"neo4j without a URI", []string{"--store", "neo4j"}, map[string]string{"NEO4J_URI": ""}, []string{"NEO4J_URI"}},
		{"neo4j with a bad URI", nil, map[string]string{"NEO4J_URI": "http://x"}, []string{"NEO4J_URI"}},
		{"tokens file missing", []string{"--tokens-file", filepath.Join(dir, "nope.json")}, nil, []string{"--tokens-file"}},
		{"tokens file not JSON", []string{"--tokens-file", notJSON}, nil, []string{"--tokens-file"}},
		{"tokens file unknown scope", []string{"--tokens-file", badScope}, nil, []string{"--tokens-file", "root"}},
		{"tokens file bad hash", []string{"--tokens-file", badHash}, nil, []string{"--tokens-file", "sha256"}},
		{"tokens file with no token", []string{"--tokens-file", noTokens}, nil, []string{"--tokens-file", "no token"}},
		{"tokens file with no token (env)", nil, map[string]string{"PROCGRAPH_TOKENS_FILE": noTokens}, []string{"PROCGRAPH_TOKENS_FILE", "no token"}},
		{"tokens file without a tokens list", []string{"--tokens-file", noKey}, nil, []string{"--tokens-file", "no token"}},
		{"tokens file empty", []string{"--tokens-file", emptyFile}, nil, []string{"--tokens-file", "not a tokens file"}},
		{"tokens file unknown field", nil, map[string]string{"PROCGRAPH_TOKENS_FILE": extraField}, []string{"PROCGRAPH_TOKENS_FILE"}},
		{"catalogue invalid", []string{"--tools", badCat}, nil, []string{"--tools"}},
		{"catalogue missing", []string{"--tools", filepath.Join(dir, "none.json")}, nil, []string{"--tools"}},
		{"upstream not http", []string{"--upstream-http", "ftp://example.com"}, nil, []string{"--upstream-http"}},
		{"upstream mcp not http", []string{"--upstream-mcp", "ftp://example.com"}, nil, []string{"--upstream-mcp"}},
		{"two upstreams", []string{"--upstream-http", "http://127.0.0.1:1"}, map[string]string{"PROCGRAPH_UPSTREAM_MCP": "http://127.0.0.1:1/mcp"}, []string{"exclusive"}},
		{"upstream mcp command unbalanced quote", []string{"--upstream-mcp-command", `server "oops`}, nil, []string{"--upstream-mcp-command"}},
		{"upstream mcp unreachable", []string{"--upstream-mcp", "http://127.0.0.1:1/mcp"}, nil, []string{"--upstream-mcp"}},
		{"sandbox workers zero", []string{"--sandbox-workers", "0"}, nil, []string{"--sandbox-workers"}},
		{"demote after negative", []string{"--demote-after", "-1"}, nil, []string{"--demote-after"}},
		{"demote after too many (env)", nil, map[string]string{"PROCGRAPH_DEMOTE_AFTER": "1001"}, []string{"PROCGRAPH_DEMOTE_AFTER"}},
		{"demote after not a number", []string{"--demote-after", "three"}, nil, []string{"--demote-after", "three"}},
		{"record responses yes", []string{"--record-responses", "yes"}, nil, []string{"--record-responses"}},
		{"recordings per version 0 (env)", nil, map[string]string{"PROCGRAPH_RECORDINGS_PER_VERSION": "0"}, []string{"PROCGRAPH_RECORDINGS_PER_VERSION"}},
		{"recordings per version 21", []string{"--recordings-per-version", "21"}, nil, []string{"--recordings-per-version"}},
		{"mcp sessions zero", []string{"--mcp-max-sessions", "0"}, nil, []string{"--mcp-max-sessions"}},
		{"mcp sessions per token not a number (env)", nil, map[string]string{"PROCGRAPH_MCP_MAX_SESSIONS_PER_TOKEN": "many"}, []string{"PROCGRAPH_MCP_MAX_SESSIONS_PER_TOKEN"}},
		{"max concurrent replays zero", []string{"--max-concurrent-replays", "0"}, nil, []string{"--max-concurrent-replays"}},
		{"replay queue negative (env)", nil, map[string]string{"PROCGRAPH_REPLAY_QUEUE": "-1"}, []string{"PROCGRAPH_REPLAY_QUEUE"}},
		{"replays per token not a number", []string{"--max-replays-per-token", "many"}, nil, []string{"--max-replays-per-token"}},
		{"replay timeout without a unit", []string{"--replay-timeout", "30"}, nil, []string{"--replay-timeout"}},
		{"replay timeout too long (env)", nil, map[string]string{"PROCGRAPH_REPLAY_TIMEOUT": "2h"}, []string{"PROCGRAPH_REPLAY_TIMEOUT"}},
		{"inflight bytes too small", []string{"--max-inflight-bytes", "1MiB"}, nil, []string{"--max-inflight-bytes"}},
		{"inflight bytes not a size (env)", nil, map[string]string{"PROCGRAPH_MAX_INFLIGHT_BYTES": "lots"}, []string{"PROCGRAPH_MAX_INFLIGHT_BYTES"}},
		{"heap floor past 16GiB", []string{"--heap-floor", "1TiB"}, nil, []string{"--heap-floor"}},
		{"heap floor negative (env)", nil, map[string]string{"PROCGRAPH_HEAP_FLOOR": "-64MiB"}, []string{"PROCGRAPH_HEAP_FLOOR"}},
		{"heap floor not a size", []string{"--heap-floor", "big"}, nil, []string{"--heap-floor", "big"}},
		{"call bytes over the frame", []string{"--max-call-bytes", "1GiB"}, nil, []string{"--max-call-bytes"}},
		{"call bytes do not fit the budget", []string{"--max-call-bytes", "32MiB", "--max-inflight-bytes", "64MiB"}, nil, []string{"--max-call-bytes", "--max-inflight-bytes"}},
		{"sandbox in process maybe", nil, map[string]string{"PROCGRAPH_SANDBOX_IN_PROCESS": "maybe"}, []string{"PROCGRAPH_SANDBOX_IN_PROCESS"}},
		{"log level", []string{"--log-level", "loud"}, nil, []string{"--log-level"}},
		{"pending approvals zero", []string{"--max-pending-approvals", "0"}, nil, []string{"--max-pending-approvals"}},
		{"pending approvals not a number (env)", nil, map[string]string{"PROCGRAPH_MAX_PENDING_APPROVALS": "lots"}, []string{"PROCGRAPH_MAX_PENDING_APPROVALS"}},
		{"pending per requester over the total", []string{"--max-pending-per-requester", "9", "--max-pending-approvals", "8"}, nil, []string{"--max-pending-per-requester", "--max-pending-approvals"}},
		{"pending per requester over the total (env)", nil, map[string]string{"PROCGRAPH_MAX_PENDING_PER_REQUESTER": "40"}, []string{"PROCGRAPH_MAX_PENDING_PER_REQUESTER"}},
		{"pending per requester zero", []string{"--max-pending-per-requester", "0"}, nil, []string{"--max-pending-per-requester"}},
		{"waiters zero", []string{"--max-waiters", "0"}, nil, []string{"--max-waiters"}},
		{"waiters not a number (env)", nil, map[string]string{"PROCGRAPH_MAX_WAITERS": "lots"}, []string{"PROCGRAPH_MAX_WAITERS"}},
		{"concurrent searches zero", []string{"--max-concurrent-searches", "0"}, nil, []string{"--max-concurrent-searches"}},
		{"concurrent searches negative (env)", nil, map[string]string{"PROCGRAPH_MAX_CONCURRENT_SEARCHES": "-2"}, []string{"PROCGRAPH_MAX_CONCURRENT_SEARCHES"}},
		{"approval timeout under a second", []string{"--approval-timeout", "500ms"}, nil, []string{"--approval-timeout"}},
		{"approval timeout without a unit (env)", nil, map[string]string{"PROCGRAPH_APPROVAL_TIMEOUT": "330"}, []string{"PROCGRAPH_APPROVAL_TIMEOUT"}},
		{"address without a port", []string{"--addr", "localhost"}, nil, []string{"--addr"}},
		{"unknown flag", []string{"--colour", "blue"}, nil, []string{"colour"}},
		{"stray argument", []string{"now"}, nil, []string{"no arguments"}},
		{"data is a directory", []string{"--data", dir}, nil, []string{dir}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var stdout, stderr logSink
			done := make(chan int, 1)
			args := append([]string{}, base...)
			if _, ok := tc.env["PROCGRAPH_ADDR"]; !ok {
				args = append(args, "--addr", "127.0.0.1:0")
			}
			args = overriding(args, tc.args)
			go func() { done <- runCLI(ctx, args, nil, &stdout, &stderr) }()
			// A serve that listens has started anyway: said at once, not
			// after the 20 s a refusal may take at most.
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			var code int
		wait:
			for deadline := timeAfter(20); ; {
				select {
				case code = <-done:
					break wait
				case <-tick.C:
					if !strings.Contains(stderr.String(), `"message":"listening"`) {
						continue
					}
				case <-deadline:
				}
				cancel()
				<-done
				t.Fatalf("started anyway:\n%s", stderr.String())
			}
			if code == 0 {
				t.Fatalf("exit 0:\n%s", stderr.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr.String(), w) {
					t.Fatalf("stderr does not name %q:\n%s", w, stderr.String())
				}
			}
			if strings.Contains(stderr.String(), `"message":"listening"`) {
				t.Fatalf("it listened before refusing:\n%s", stderr.String())
			}
		})
	}
	t.Run("a flag wins over its twin", func(t *testing.T) {
		t.Setenv("PROCGRAPH_ALLOW_MUTATING_AUTORUN", "yes")
		t.Setenv("PROCGRAPH_STORE", "bogus")
		s, err := startMain(t, append(append([]string{}, base...), "--addr", "127.0.0.1:0", "--allow-mutating-autorun", "true", "--store", "embedded"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(s.logs.String(), `"allow_mutating_autorun":true`) {
			t.Fatalf("logs: %s", s.logs.String())
		}
	})
}

// TestDefaultTokensFileIsNotIgnored: a token made with the default file
// (next to the data file) turns auth on for serve with that data file,
// whatever directory each starts in.
func TestDefaultTokensFileIsNotIgnored(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "p.db")
	t.Chdir(t.TempDir())
	var stdout, stderr bytes.Buffer
	if code := runCLI(context.Background(), []string{"token", "create", "--name", "ops", "--scopes", "read", "--data", data}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("token create: %d %s", code, stderr.String())
	}
	token := strings.TrimSpace(stdout.String())
	t.Chdir(t.TempDir())
	s := mustServe(t, serverOpts{Data: data, DefaultAuth: true})
	mustError(t, s.get(t, "/v1/procedures"), 401, "unauthorized")
	s.token = token
	mustStatus(t, s.get(t, "/v1/procedures"), 200)
}
