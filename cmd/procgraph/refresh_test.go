package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addLiveTool adds (or replaces) a tool of a live test server whose
// input schema's "path" is of type pathType; it answers its own name.
func addLiveTool(s *mcp.Server, name string, readOnly bool, pathType string) {
	t := &mcp.Tool{Name: name, Description: "the " + name + " tool",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": pathType}}}}
	if readOnly {
		t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
	}
	s.AddTool(t, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil
	})
}

// eventually polls check until it returns "" (what is still missing
// otherwise), failing after a generous deadline.
func eventually(t *testing.T, s *server, what string, check func() string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		missing := check()
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s\n%s", what, missing, s.logs.String())
		}
	}
}

// catalogueTools is GET /v1/tools's tools by name.
func catalogueTools(t *testing.T, s *server) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, tl := range mustStatus(t, s.get(t, "/v1/tools"), 200)["tools"].([]any) {
		m := tl.(map[string]any)
		out[m["name"].(string)] = m
	}
	return out
}

// TestCatalogueFollowsTheLiveServers: procgraph in front of a live MCP
// server (the Go SDK, streamable HTTP) under two keys of an upstreams file,
// one trusted, with the timer off (--catalogue-refresh 0): what changes on
// the server reaches the catalogue through tools/list_changed, with no
// restart. A changed input schema makes the procedure calling the tool
// stale and its active grant inactive (catalogue_drift); a new tool is
// state-changing on the untrusted server; an entry an operator edited
// is kept when its tool changes on the server; a removed tool makes the
// procedure's replay fail with unknown_tool, and nothing is deleted.
func TestCatalogueFollowsTheLiveServers(t *testing.T) {
	live := mcp.NewServer(&mcp.Implementation{Name: "live", Version: "v1"}, nil)
	addLiveTool(live, "read-file", true, "string")
	addLiveTool(live, "write_file", false, "string")
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return live }, nil))
	t.Cleanup(ts.Close)
	file := writeUpstreams(t, map[string]any{
		"t": map[string]any{"url": ts.URL, "trust_annotations": true},
		"u": map[string]any{"url": ts.URL},
	})
	s := mustServe(t, serverOpts{NoCatalogue: true, Extra: []string{"--upstreams", file, "--catalogue-refresh", "0"}})

	// At start, the catalogue is what the servers list.
	tools := catalogueTools(t, s)
	if len(tools) != 4 || tools["t__read_file"]["read_only"] != true || tools["u__read_file"]["read_only"] != false ||
		tools["t__read_file"]["upstream_name"] != "read-file" || tools["t__read_file"]["listed"] == nil {
		t.Fatalf("the catalogue at start: %v", tools)
	}
	name := mustCaptureName(t, s, "return tools.t__read_file(path=path)\n", "s1")
	args := map[string]any{"arguments": map[string]any{"path": "a"}, "phase": "automatic"}
	if out := mustStatus(t, s.invoke(t, name, args), 200); out["status"] != "succeeded" || out["result"] != "read-file" {
		t.Fatalf("invoke: %v", out)
	}
	mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/procedures/" + name + "/auto-run", Body: map[string]any{"enabled": true, "reason": "reviewed"}}), 200)
	if ar := mustStatus(t, s.get(t, "/v1/procedures/"+name), 200)["auto_run"].(map[string]any); ar["active"] != true {
		t.Fatalf("the grant is not active: %v", ar)
	}

	// The operator edits an entry: theirs now.
	edited := []any{}
	for _, tl := range tools {
		if tl["name"] == "u__write_file" {
			tl["description"] = "writes a file: reviewed by alice"
		}
		edited = append(edited, tl)
	}
	mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/tools", Body: map[string]any{"tools": edited}}), 200)

	// The input schema changes on the live server: stale, grant suspended.
	addLiveTool(live, "read-file", true, "integer")
	eventually(t, s, "the changed schema", func() string {
		p := mustStatus(t, s.get(t, "/v1/procedures/"+name), 200)
		ar := p["auto_run"].(map[string]any)
		if p["stale"] != true || ar["active"] != false {
			return "not stale, or its grant still active"
		}
		if d := p["drift"].([]any); len(d) != 1 || d[0].(map[string]any)["change"] != "input_schema" || ar["inactive_reason"] != "catalogue_drift" {
			t.Fatalf("drift %v, auto_run %v", d, ar)
		}
		return ""
	})

	// A new tool: state-changing unless its server is trusted. A changed
	// tool whose entry the operator edited: kept as the operator put it.
	addLiveTool(live, "stat", true, "string")
	addLiveTool(live, "write_file", false, "integer")
	eventually(t, s, "the new tool", func() string {
		tools = catalogueTools(t, s)
		if tools["t__stat"] == nil || tools["u__stat"] == nil || tools["t__write_file"]["schema_hash"] == tools["u__write_file"]["schema_hash"] {
			return "not in the catalogue yet"
		}
		return ""
	})
	if tools["t__stat"]["read_only"] != true || tools["u__stat"]["read_only"] != false {
		t.Fatalf("new tools: trusted %v, untrusted %v", tools["t__stat"], tools["u__stat"])
	}
	if w := tools["u__write_file"]; w["description"] != "writes a file: reviewed by alice" ||
		!strings.Contains(string(mustJSON(t, w["input_schema"])), `"string"`) {
		t.Fatalf("the operator's entry was not kept: %v", w)
	}
	// `procgraph tools get` says whose each entry is.
	code, tout, terr := runMainWith(t, map[string]string{"PROCGRAPH_URL": s.URL}, "tools", "get")
	if code != 0 || !regexp.MustCompile(`(?m)^u__write_file\s+u\s+write_file\s+no\s+yes\s+operator\s`).MatchString(tout) ||
		!regexp.MustCompile(`(?m)^t__write_file\s+t\s+write_file\s+no\s+yes\s+server\s`).MatchString(tout) {
		t.Fatalf("tools get: exit %d: %s\n%s", code, terr, tout)
	}

	// The tool disappears: the replay is refused as unknown_tool; the
	// procedure and its grant are still there.
	live.RemoveTools("read-file")
	eventually(t, s, "the removal", func() string {
		if catalogueTools(t, s)["t__read_file"] != nil {
			return "still in the catalogue"
		}
		return ""
	})
	d := mustError(t, s.invoke(t, name, args), 403, "denied")
	if dec := d["decision"].(map[string]any); dec["reason"] != "unknown_tool" || !strings.Contains(dec["suggestion"].(string), "t__read_file") {
		t.Fatalf("the replay of a procedure whose tool left: %v", d)
	}
	p := mustStatus(t, s.get(t, "/v1/procedures/"+name), 200)
	if p["auto_run"].(map[string]any)["enabled"] != true || !strings.Contains(string(mustJSON(t, p["unknown_tools"])), "t__read_file") {
		t.Fatalf("after the removal: %v", p)
	}
	audited := false // each server's refresh is its own record, in either order
	for _, d := range s.decisions(t, "kind=catalogue") {
		audited = audited || d["reason"] == "catalogue_refreshed" && d["actor"] == "procgraph catalogue refresh" &&
			d["note"] == "server t: removed 1 (t__read_file)"
	}
	if !audited {
		t.Fatalf("the removal is not audited: %v", s.decisions(t, "kind=catalogue"))
	}
}
