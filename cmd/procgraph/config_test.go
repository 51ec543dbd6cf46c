package main

import (
	"context"
	"errors"
	"flag"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestServeSettings checks every serve setting from its flag and from its
// environment twin, that a flag wins over its twin, and the defaults.
func TestServeSettings(t *testing.T) {
	cases := []struct {
		flag, value string
		want        func(c *serveConfig) any
		wantValue   any
	}{
		{"addr", "127.0.0.1:9999", func(c *serveConfig) any { return c.Addr }, "127.0.0.1:9999"},
		{"store", "neo4j", func(c *serveConfig) any { return c.Store }, "neo4j"},
		{"data", "/tmp/x.db", func(c *serveConfig) any { return c.Data }, "/tmp/x.db"},
		{"tools", "cat.json", func(c *serveConfig) any { return c.ToolsFile }, "cat.json"},
		{"upstream-http", "http://127.0.0.1:8475", func(c *serveConfig) any { return c.UpstreamHTTP }, "http://127.0.0.1:8475"},
		{"upstream-mcp", "https://tools.example/mcp", func(c *serveConfig) any { return c.UpstreamMCP }, "https://tools.example/mcp"},
		{"upstream-mcp-command", `server --name "a b"`, func(c *serveConfig) any { return c.UpstreamMCPCommand }, []string{"server", "--name", "a b"}},
		{"upstreams", "/etc/procgraph/upstreams.json", func(c *serveConfig) any { return c.UpstreamsFile }, "/etc/procgraph/upstreams.json"},
		{"catalogue-refresh", "0", func(c *serveConfig) any { return c.CatalogueRefresh }, time.Duration(0)},
		{"tokens-file", "/etc/procgraph/t.json", func(c *serveConfig) any { return c.TokensFile }, "/etc/procgraph/t.json"},
		{"auth", "off", func(c *serveConfig) any { return c.Auth }, "off"},
		{"allow-mutating-autorun", "true", func(c *serveConfig) any { return c.AllowMutatingAutorun }, true},
		{"demote-after", "0", func(c *serveConfig) any { return c.DemoteAfter }, 0},
		{"record-responses", "false", func(c *serveConfig) any { return c.RecordResponses }, false},
		{"recordings-per-version", "7", func(c *serveConfig) any { return c.RecordingsPerVersion }, 7},
		{"log-level", "debug", func(c *serveConfig) any { return c.LogLevel }, "debug"},
		{"log-format", "text", func(c *serveConfig) any { return c.LogFormat }, "text"},
		{"sandbox-workers", "7", func(c *serveConfig) any { return c.SandboxWorkers }, 7},
		{"sandbox-in-process", "true", func(c *serveConfig) any { return c.InProcessSandbox }, true},
		{"max-concurrent-replays", "5", func(c *serveConfig) any { return c.MaxConcurrentReplays }, 5},
		{"replay-queue", "0", func(c *serveConfig) any { return c.ReplayQueue }, 0},
		{"max-replays-per-token", "3", func(c *serveConfig) any { return c.MaxReplaysPerToken }, 3},
		{"replay-timeout", "1m30s", func(c *serveConfig) any { return c.ReplayTimeout }, 90 * time.Second},
		{"max-inflight-bytes", "1GiB", func(c *serveConfig) any { return c.MaxInflightBytes }, int64(1 << 30)},
		{"heap-floor", "0", func(c *serveConfig) any { return c.HeapFloor }, int64(0)},
		{"max-call-bytes", "1048576", func(c *serveConfig) any { return c.MaxCallBytes }, int64(1 << 20)},
		{"mcp-max-sessions", "100", func(c *serveConfig) any { return c.MCPMaxSessions }, 100},
		{"mcp-max-sessions-per-token", "9", func(c *serveConfig) any { return c.MCPMaxSessionsPerToken }, 9},
		{"max-pending-approvals", "5", func(c *serveConfig) any { return c.MaxPendingApprovals }, 5},
		{"max-pending-per-requester", "4", func(c *serveConfig) any { return c.MaxPendingPerRequester }, 4},
		{"max-waiters", "10", func(c *serveConfig) any { return c.MaxWaiters }, 10},
		{"max-concurrent-searches", "3", func(c *serveConfig) any { return c.MaxConcurrentSearches }, 3},
		{"approval-timeout", "2m", func(c *serveConfig) any { return c.ApprovalTimeout }, 2 * time.Minute},
		{"audit-retention", "2160h", func(c *serveConfig) any { return c.AuditRetention }, 2160 * time.Hour},
		{"audit-archive-dir", "/var/archives", func(c *serveConfig) any { return c.AuditArchiveDir }, "/var/archives"},
		{"notify-webhook", "https://hooks.example/a http://127.0.0.1:9/b", func(c *serveConfig) any { return c.NotifyWebhooks }, []string{"https://hooks.example/a", "http://127.0.0.1:9/b"}},
		{"notify-secret-file", "/etc/procgraph/hook.key", func(c *serveConfig) any { return c.NotifySecretFile }, "/etc/procgraph/hook.key"},
		{"notify-format", "slack", func(c *serveConfig) any { return c.NotifyFormat }, "slack"},
		{"public-url", "https://procgraph.example", func(c *serveConfig) any { return c.PublicURL }, "https://procgraph.example"},
		{"review-default", "at_call", func(c *serveConfig) any { return c.ReviewDefault }, "at_call"},
	}
	t.Setenv("NEO4J_URI", "bolt://127.0.0.1:7687")
	t.Setenv("PROCGRAPH_AUDIT_ARCHIVE_DIR", "/var/archives")        // a retention needs one
	t.Setenv("PROCGRAPH_TOKENS_FILE", "/etc/procgraph/tokens.json") // neo4j needs one
	// noTokensFile clears it for --auth off, which refuses one.
	noTokensFile := func(t *testing.T, flag string) {
		if flag == "auth" {
			t.Setenv("PROCGRAPH_TOKENS_FILE", "")
		}
	}
	var seen []string
	for _, tc := range cases {
		seen = append(seen, tc.flag)
		env := "PROCGRAPH_" + strings.ToUpper(strings.ReplaceAll(tc.flag, "-", "_"))
		t.Run(tc.flag+" flag", func(t *testing.T) {
			noTokensFile(t, tc.flag)
			c, err := parseServeConfig([]string{"--" + tc.flag, tc.value})
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.want(c); !reflect.DeepEqual(got, tc.wantValue) {
				t.Fatalf("got %#v, want %#v", got, tc.wantValue)
			}
		})
		t.Run(tc.flag+" env "+env, func(t *testing.T) {
			noTokensFile(t, tc.flag)
			t.Setenv(env, tc.value)
			c, err := parseServeConfig(nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.want(c); !reflect.DeepEqual(got, tc.wantValue) {
				t.Fatalf("got %#v, want %#v", got, tc.wantValue)
			}
		})
	}
	var registered []string
	(&serveConfig{}).serveFlags(newFlagSet("serve")).fs.VisitAll(func(f *flag.Flag) { registered = append(registered, f.Name) })
	if strings.Join(registered, ",") != strings.Join(slices.Sorted(slices.Values(seen)), ",") {
		t.Fatalf("settings %v, tested %v: every setting needs a case", registered, seen)
	}

	t.Run("review-default refuses another review", func(t *testing.T) {
		for _, v := range []string{"at-call", "none", "", "at_call\x00"} {
			if _, err := parseServeConfig([]string{"--review-default", v}); err == nil || !strings.Contains(err.Error(), "review-default") {
				t.Errorf("--review-default %q: %v, want an error naming the setting", v, err)
			}
		}
		t.Setenv("PROCGRAPH_REVIEW_DEFAULT", "always")
		if _, err := parseServeConfig(nil); err == nil || !strings.Contains(err.Error(), "REVIEW_DEFAULT") && !strings.Contains(err.Error(), "review-default") {
			t.Errorf("PROCGRAPH_REVIEW_DEFAULT=always: %v, want an error naming the setting", err)
		}
	})

	t.Run("defaults", func(t *testing.T) {
		t.Setenv("NEO4J_URI", "")
		t.Setenv("PROCGRAPH_AUDIT_ARCHIVE_DIR", "")
		t.Setenv("PROCGRAPH_TOKENS_FILE", "")
		c, err := parseServeConfig(nil)
		if err != nil {
			t.Fatal(err)
		}
		tokens, _ := filepath.Abs(defaultTokensFile)
		want := serveConfig{Addr: "127.0.0.1:8474", Store: "embedded", Data: "./procgraph.db", LogLevel: "info", SandboxWorkers: 2,
			Auth: "tokens", TokensFile: tokens, TokensDefault: true,
			MaxConcurrentReplays: 8, ReplayQueue: 16, MaxReplaysPerToken: -1, ReplayTimeout: 30 * time.Second,
			MaxInflightBytes: 256 << 20, HeapFloor: 64 << 20, MaxCallBytes: 4 << 20, MCPMaxSessions: 1024, MCPMaxSessionsPerToken: 64,
			MaxPendingApprovals: 32, MaxPendingPerRequester: 8, ApprovalTimeout: 330 * time.Second,
			MaxWaiters: 1024, MaxConcurrentSearches: 2 * runtime.NumCPU(), DemoteAfter: 3, RecordResponses: true, RecordingsPerVersion: 3,
			NotifyFormat: "json", CatalogueRefresh: 5 * time.Minute, ReviewDefault: "block"}
		if !reflect.DeepEqual(*c, want) {
			t.Fatalf("got %+v, want %+v", *c, want)
		}
	})
	t.Run("a catalogue refresh under 1s is refused, 0 is off", func(t *testing.T) {
		if _, err := parseServeConfig([]string{"--catalogue-refresh", "10ms"}); err == nil || !strings.Contains(err.Error(), "--catalogue-refresh / PROCGRAPH_CATALOGUE_REFRESH") {
			t.Fatalf("10ms: %v", err)
		}
		t.Setenv("PROCGRAPH_CATALOGUE_REFRESH", "90s")
		if c, err := parseServeConfig(nil); err != nil || c.CatalogueRefresh != 90*time.Second {
			t.Fatalf("the twin: %v", err)
		}
	})
	t.Run("the per-requester pending default follows a lower total", func(t *testing.T) {
		c, err := parseServeConfig([]string{"--max-pending-approvals", "3"})
		if err != nil {
			t.Fatal(err)
		}
		if c.MaxPendingPerRequester != 3 {
			t.Fatalf("per requester %d, want 3 (the total)", c.MaxPendingPerRequester)
		}
	})
	t.Run("a flag wins over its twin", func(t *testing.T) {
		t.Setenv("PROCGRAPH_SANDBOX_WORKERS", "9")
		t.Setenv("PROCGRAPH_LOG_LEVEL", "loud") // never read: the flag is given
		c, err := parseServeConfig([]string{"--sandbox-workers", "3", "--log-level", "warn"})
		if err != nil {
			t.Fatal(err)
		}
		if c.SandboxWorkers != 3 || c.LogLevel != "warn" {
			t.Fatalf("got %d %q", c.SandboxWorkers, c.LogLevel)
		}
	})
	t.Run("help", func(t *testing.T) {
		for _, args := range [][]string{{"--help"}, {"-h"}, {"--addr", "127.0.0.1:1", "--help"}} {
			if _, err := parseServeConfig(args); !errors.Is(err, flag.ErrHelp) {
				t.Fatalf("%q: %v, want flag.ErrHelp", args, err)
			}
		}
	})
}

// TestServeHelp: `serve --help` and `help serve` print serve's usage with
// every setting and its twin on stdout, and exit 0.
func TestServeHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"serve", "--help"}, {"serve", "-h"}, {"help", "serve"}} {
		code, out, errOut := runMain(t, args...)
		if code != 0 || errOut != "" {
			t.Fatalf("%q: exit %d, stderr %q", args, code, errOut)
		}
		(&serveConfig{}).serveFlags(newFlagSet("serve")).fs.VisitAll(func(f *flag.Flag) {
			if !strings.Contains(out, "--"+f.Name+" ") || !strings.Contains(out, envName(f.Name)) {
				t.Errorf("%q: the usage lacks --%s or %s:\n%s", args, f.Name, envName(f.Name), out)
			}
		})
	}
}

// TestUnreachableUpstreamHTTPWarns: an --upstream-http nothing listens on
// starts with a warning naming the setting (it is not refused: see
// warnUnreachable); a reachable one starts without it.
func TestUnreachableUpstreamHTTPWarns(t *testing.T) {
	t.Parallel()
	const warning = "the upstream tool server is unreachable"
	data := filepath.Join(t.TempDir(), "p.db")
	s, err := startMain(t, []string{"serve", "--addr", "127.0.0.1:0", "--data", data, "--sandbox-workers", "1",
		"--upstream-http", "http://127.0.0.1:1/call?secret=x"})
	if err != nil {
		t.Fatal(err)
	}
	logs := s.logs.String()
	if !strings.Contains(logs, warning) || !strings.Contains(logs, "--upstream-http") || !strings.Contains(logs, `"level":"warn"`) {
		t.Fatalf("no warning naming --upstream-http:\n%s", logs)
	}
	if strings.Contains(logs, "secret") {
		t.Fatalf("the warning logs the URL's query:\n%s", logs)
	}
	s.mustHealthy(t)
	s.Stop(t)

	up := mustUpstream(t)
	s = mustServe(t, serverOpts{Upstream: up})
	if strings.Contains(s.logs.String(), warning) {
		t.Fatalf("a reachable upstream warned:\n%s", s.logs.String())
	}
}

// TestRepeatedFlagIsRefused: a single-value flag given twice is an error
// naming it, for every serve setting and in the client commands, never
// "the last one wins"; a repeatable flag still takes many values.
func TestRepeatedFlagIsRefused(t *testing.T) {
	values := map[string]string{"store": "embedded", "tools": "a.json", "upstream-http": "http://127.0.0.1:1", "upstream-mcp": "http://127.0.0.1:1/mcp",
		"upstream-mcp-command": "server", "upstreams": "u.json", "tokens-file": "t.json", "log-format": "json", "max-concurrent-replays": "2",
		"replay-queue": "2", "max-replays-per-token": "2", "max-pending-per-requester": "2", "max-concurrent-searches": "2", "audit-archive-dir": "/a",
		"notify-secret-file": "k", "public-url": "http://127.0.0.1:1"}
	n := 0
	(&serveConfig{}).serveFlags(newFlagSet("serve")).fs.VisitAll(func(f *flag.Flag) {
		n++
		v := f.DefValue
		if w, ok := values[f.Name]; ok {
			v = w
		}
		if f.Name == "notify-webhook" {
			return // repeatable: see below
		}
		if v == "" {
			t.Errorf("--%s: no value to give twice", f.Name)
			return
		}
		_, err := parseServeConfigEnv([]string{"--" + f.Name, v, "--" + f.Name, v}, func(string) string { return "" })
		if err == nil || !strings.Contains(err.Error(), "--"+f.Name+" is given more than once") {
			t.Errorf("--%s twice: %v", f.Name, err)
		}
	})
	if n < 30 {
		t.Fatalf("only %d serve flags", n)
	}
	// A repeatable setting takes every value given.
	c, err := parseServeConfigEnv([]string{"--notify-webhook", "http://127.0.0.1:1/a", "--notify-webhook", "http://127.0.0.1:1/b"}, func(string) string { return "" })
	if err != nil || len(c.NotifyWebhooks) != 2 {
		t.Fatalf("two webhooks: %v %v", c, err)
	}
	// The case of the issue: two upstream commands, the first silently dropped.
	_, err = parseServeConfigEnv([]string{"--upstream-mcp-command", "fs-server", "--upstream-mcp-command", "git-server"}, func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "--upstream-mcp-command is given more than once") {
		t.Fatalf("two upstream commands: %v", err)
	}

	var stdout, stderr strings.Builder
	code := runCLI(context.Background(), []string{"tools", "import", "--from-mcp-command", "a", "--from-mcp-command", "b"}, nil, &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "--from-mcp-command is given more than once") {
		t.Fatalf("tools import with two commands: exit %d: %s", code, stderr.String())
	}
	stderr.Reset()
	code = runCLI(context.Background(), []string{"procedures", "list", "--json", "--json"}, nil, &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "--json is given more than once") {
		t.Fatalf("procedures list --json --json: exit %d: %s", code, stderr.String())
	}

	cl := newCmdline("list", "list", "", false)
	var tools repeated
	cl.fs.Var(&tools, "tool", "repeatable")
	limit := cl.fs.Int("limit", 25, "page size")
	if _, code, done := cl.parse([]string{"--tool", "a", "--limit", "3", "--tool", "b"}, 0, 0, stdio{out: &stdout, err: &stderr}); done {
		t.Fatalf("repeatable --tool refused: exit %d: %s", code, stderr.String())
	}
	if strings.Join(tools, ",") != "a,b" || *limit != 3 {
		t.Fatalf("tools %v limit %d", tools, *limit)
	}
}
