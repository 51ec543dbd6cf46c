package mcpdispatch

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// exampleUpstreams is a file as people keep it for Claude Desktop, with
// procgraph's keys.
const exampleUpstreams = `{
  "mcpServers": {
    "fs": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv/data"],
      "env": {"NODE_OPTIONS": "--max-old-space-size=256"},
      "trust_annotations": true
    },
    "everything": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"], "prefix": "ev"},
    "remote": {
      "type": "http",
      "url": "https://tools.example/mcp",
      "headers": {"Authorization": "Bearer x"},
      "timeout": "45s", "max_concurrency": 4, "protocol_version": "2025-06-18", "prefix": ""
    }
  }
}`

// TestParseUpstreams reads every key of the file.
func TestParseUpstreams(t *testing.T) {
	ups, err := ParseUpstreams([]byte(exampleUpstreams))
	if err != nil {
		t.Fatal(err)
	}
	want := []Upstream{
		{Key: "everything", Command: []string{"npx", "-y", "@modelcontextprotocol/server-everything"}, Prefix: "ev"},
		{Key: "fs", Command: []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv/data"},
			Env: map[string]string{"NODE_OPTIONS": "--max-old-space-size=256"}, Prefix: "fs", TrustAnnotations: true},
		{Key: "remote", URL: "https://tools.example/mcp", Headers: map[string]string{"Authorization": "Bearer x"}, Prefix: "",
			Timeout: 45 * time.Second, MaxConcurrency: 4, ProtocolVersion: "2025-06-18"},
	}
	if !reflect.DeepEqual(ups, want) {
		t.Fatalf("got  %+v\nwant %+v", ups, want)
	}
	src := ups[2].source(Options{})
	if src.Options.Server != "remote" || src.Options.CallTimeout != 45*time.Second || src.Options.Header.Get("Authorization") != "Bearer x" ||
		src.Options.MaxConcurrency != 4 || src.Options.ProtocolVersion != "2025-06-18" {
		t.Fatalf("options %+v", src.Options)
	}
	env := ups[1].source(Options{Env: []string{"PATH=/bin", "NODE_OPTIONS=old"}}).Options.Env
	if strings.Join(env, " ") != "PATH=/bin NODE_OPTIONS=--max-old-space-size=256" {
		t.Fatalf("env %q", env)
	}
}

// TestParseUpstreamsRefuses: each mistake is an error saying where.
func TestParseUpstreamsRefuses(t *testing.T) {
	cases := []struct{ name, file, want string }{
		{"not JSON", `{"mcpServers": {`, "line 1, column 17"},
		{"syntax error on line 3", "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\"},\n  \"b\": {\"command\" \"y\"}}}", "line 3, column 19"},
		{"unknown top-level key", `{"mcpServers": {"a": {"command": "x"}}, "globalShortcut": "x"}`, `line 1, column 41: unknown key "globalShortcut"`},
		{"unknown server key", "{\"mcpServers\": {\"a\": {\n  \"command\": \"x\",\n  \"timout\": \"3s\"}}}", `line 3, column 3: mcpServers.a: unknown key "timout"`},
		{"repeated server", `{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}`, `line 1, column 40: mcpServers: the key "a" appears twice`},
		{"repeated field", `{"mcpServers": {"a": {"command": "x", "command": "y"}}}`, `column 39: mcpServers.a: the key "command" appears twice`},
		{"repeated top-level", `{"mcpServers": {"a": {"command": "x"}}, "mcpServers": {}}`, `appears twice`},
		{"both", `{"mcpServers": {"a": {"command": "x", "url": "http://h/"}}}`, "line 1, column 17: mcpServers.a: give a command or a url, not both"},
		{"neither", `{"mcpServers": {"a": {"args": []}}}`, "give a command (stdio) or a url"},
		{"no servers", `{"mcpServers": {}}`, "no server"},
		{"no mcpServers", `{}`, `no "mcpServers"`},
		{"not an object", `[]`, "must be an object"},
		{"trailing data", `{"mcpServers": {"a": {"command": "x"}}} {}`, "line 1, column 41: something follows"},
		{"empty command", `{"mcpServers": {"a": {"command": " "}}}`, "mcpServers.a.command: empty"},
		{"args not strings", `{"mcpServers": {"a": {"command": "x", "args": ["a", 1]}}}`, "mcpServers.a.args.1: must be a string"},
		{"env not strings", `{"mcpServers": {"a": {"command": "x", "env": {"A": true}}}}`, "mcpServers.a.env.A: must be a string"},
		{"env name with =", `{"mcpServers": {"a": {"command": "x", "env": {"A=B": "c"}}}}`, "not a valid name"},
		{"bad URL", `{"mcpServers": {"a": {"url": "ftp://h/"}}}`, "not an absolute http(s) URL"},
		{"relative URL", `{"mcpServers": {"a": {"url": "/mcp"}}}`, "not an absolute http(s) URL"},
		{"header name", `{"mcpServers": {"a": {"url": "http://h/", "headers": {"Bad Name": "x"}}}}`, "not a valid name"},
		{"header value newline", `{"mcpServers": {"a": {"url": "http://h/", "headers": {"X": "a\r\nHost: evil"}}}}`, "control character"},
		{"headers with a command", `{"mcpServers": {"a": {"command": "x", "headers": {}}}}`, "mcpServers.a.headers: only with a url"},
		{"args with a url", `{"mcpServers": {"a": {"url": "http://h/", "args": []}}}`, "mcpServers.a.args: only with a command"},
		{"sse", `{"mcpServers": {"a": {"type": "sse", "url": "http://h/sse"}}}`, "SSE transport is not supported"},
		{"type mismatch", `{"mcpServers": {"a": {"type": "http", "command": "x"}}}`, "does not match"},
		{"unknown type", `{"mcpServers": {"a": {"type": "ws", "url": "http://h/"}}}`, `"ws" is not stdio`},
		{"timeout no unit", `{"mcpServers": {"a": {"command": "x", "timeout": "30"}}}`, "is not a duration"},
		{"timeout too long", `{"mcpServers": {"a": {"command": "x", "timeout": "1h"}}}`, "is not a duration"},
		{"timeout number", `{"mcpServers": {"a": {"command": "x", "timeout": 30}}}`, "must be a string"},
		{"concurrency zero", `{"mcpServers": {"a": {"command": "x", "max_concurrency": 0}}}`, "integer from 1 to 1024"},
		{"concurrency fraction", `{"mcpServers": {"a": {"command": "x", "max_concurrency": 1.5}}}`, "integer from 1 to 1024"},
		{"concurrency string", `{"mcpServers": {"a": {"command": "x", "max_concurrency": "4"}}}`, "integer from 1 to 1024"},
		{"protocol", `{"mcpServers": {"a": {"command": "x", "protocol_version": "2099-01-01"}}}`, "is not one of"},
		{"trust not bool", `{"mcpServers": {"a": {"command": "x", "trust_annotations": "yes"}}}`, "must be true or false"},
		{"reserved prefix by key", `{"mcpServers": {"proc": {"command": "x"}}}`, `prefix "proc" would give every tool a name starting with "proc__"`},
		{"reserved prefix", `{"mcpServers": {"a": {"command": "x", "prefix": "proc"}}}`, `set another "prefix"`},
		{"long prefix", `{"mcpServers": {"a": {"command": "x", "prefix": "` + strings.Repeat("p", 65) + `"}}}`, "longer than 64 bytes"},
		{"key with a space", `{"mcpServers": {"my server": {"command": "x"}}}`, `line 1, column 17: mcpServers: server key "my server"`},
		{"key path", `{"mcpServers": {"../etc": {"command": "x"}}}`, "server key"},
		{"key control", `{"mcpServers": {"a\u0000": {"command": "x"}}}`, "server key"},
		{"long key", `{"mcpServers": {"` + strings.Repeat("k", 65) + `": {"command": "x"}}}`, "server key"},
		{"lone surrogate", `{"mcpServers": {"a": {"command": "x", "args": ["\ud800"]}}}`, "surrogate"},
		{"value control", `{"mcpServers": {"a": {"command": "x\u001b[31m"}}}`, "control character"},
		{"column in characters", "{\"mcpServers\": {\"a\": {\"command\": \"é\", \"bogus\": 1}}}", "line 1, column 39"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseUpstreams([]byte(c.file))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%v, want %q", err, c.want)
			}
		})
	}
}

// TestParseUpstreamsBounds: the file's size, its servers and a server's
// lists are bounded.
func TestParseUpstreamsBounds(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	data := `{"mcpServers": {"a": {"command": "x", "args": ["` + strings.Repeat("a", MaxUpstreamsFileBytes) + `"]}}}`
	if err := os.WriteFile(big, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadUpstreams(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("oversized file: %v", err)
	}
	if _, err := ReadUpstreams(filepath.Join(dir, "none.json")); err == nil {
		t.Fatal("a missing file was read")
	}
	var b strings.Builder
	b.WriteString(`{"mcpServers": {`)
	for i := range MaxUpstreams + 1 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"s%03d": {"command": "x"}`, i)
	}
	b.WriteString(`}}`)
	if _, err := ParseUpstreams([]byte(b.String())); err == nil || !strings.Contains(err.Error(), "more than 64 servers") {
		t.Fatalf("too many servers: %v", err)
	}
	args := `["` + strings.Repeat(`a", "`, maxUpstreamItems) + `a"]`
	if _, err := ParseUpstreams([]byte(`{"mcpServers": {"a": {"command": "x", "args": ` + args + `}}}`)); err == nil || !strings.Contains(err.Error(), "more than 256 items") {
		t.Fatalf("too many args: %v", err)
	}
	long := `{"mcpServers": {"a": {"command": "` + strings.Repeat("c", maxUpstreamString+1) + `"}}}`
	if _, err := ParseUpstreams([]byte(long)); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("long string: %v", err)
	}
	ok := filepath.Join(dir, "ok.json")
	if err := os.WriteFile(ok, []byte(exampleUpstreams), 0o600); err != nil {
		t.Fatal(err)
	}
	if ups, err := ReadUpstreams(ok); err != nil || len(ups) != 3 {
		t.Fatalf("%v %v", ups, err)
	}
}

// FuzzParseUpstreams: whatever the file, parsing returns servers whose
// keys are valid and whose prefixes name no procedure, or an error with a
// line and column — never a panic.
func FuzzParseUpstreams(f *testing.F) {
	f.Add([]byte(exampleUpstreams))
	f.Add([]byte(`{"mcpServers": {"a": {"command": "x"}}}`))
	f.Add([]byte(`{"mcpServers": {"a": {"url": "http://h/", "headers": {"X": "y"}}}}`))
	f.Add([]byte(`{"mcpServers": {"a": {"command": "x", "command": "y"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ups, err := ParseUpstreams(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") && !strings.Contains(err.Error(), "surrogate") {
				t.Fatalf("an error without its place: %v", err)
			}
			return
		}
		if len(ups) == 0 || len(ups) > MaxUpstreams {
			t.Fatalf("%d servers", len(ups))
		}
		for _, u := range ups {
			if (len(u.Command) > 0) == (u.URL != "") {
				t.Fatalf("%q: command %q url %q", u.Key, u.Command, u.URL)
			}
			if _, err := ToolName(u.Prefix, "t"); err != nil {
				t.Fatalf("%q: prefix %q: %v", u.Key, u.Prefix, err)
			}
		}
	})
}
