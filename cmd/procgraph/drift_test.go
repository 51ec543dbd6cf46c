package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDriftCommands: procgraph drift and accept-drift through Main against
// a live server with tokens: a catalogue change (tools put) that changes a
// tool's input schema lists the procedure's version as stale, with the
// change, in human and JSON output; accept-drift needs the grant scope,
// then clears it (audited, kind drift); a second accept is refused as not
// stale.
func TestDriftCommands(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.json")
	root := mustCreateToken(t, tokens, "root", "read,capture,invoke,grant,admin")
	agent := mustCreateToken(t, tokens, "agent", "read,capture,invoke")
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up, TokensFile: tokens})
	t.Setenv("PROCGRAPH_URL", s.URL)
	t.Setenv("PROCGRAPH_TOKEN", root)
	file := filepath.Join(dir, "ro.star")
	if err := os.WriteFile(file, []byte(readOnlyCode), 0o600); err != nil {
		t.Fatal(err)
	}
	var cap struct{ Procedure map[string]any }
	mustRunJSON(t, &cap, "capture", file, "--json")
	hash, _ := cap.Procedure["code_hash"].(string)

	var cat struct {
		Tools []map[string]any `json:"tools"`
	}
	mustRunJSON(t, &cat, "tools", "get", "--json")
	for _, tl := range cat.Tools {
		if tl["name"] == "get_retry_chain" {
			tl["input_schema"] = map[string]any{"type": "object", "properties": map[string]any{"task_id": map[string]any{"type": "string"}}}
		}
	}
	b, _ := json.Marshal(map[string]any{"tools": cat.Tools})
	catFile := filepath.Join(dir, "tools.json")
	if err := os.WriteFile(catFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runMain(t, "tools", "put", catFile); code != 0 {
		t.Fatalf("tools put: exit %d, %s", code, errOut)
	}

	code, out, errOut := runMain(t, "drift")
	if code != 0 || !strings.Contains(out, readOnlyName) || !strings.Contains(out, "get_retry_chain: input_schema") || !strings.Contains(out, "1 stale version") {
		t.Fatalf("drift: exit %d\n%s%s", code, out, errOut)
	}
	var page struct {
		Versions []struct {
			Procedure string
			CodeHash  string `json:"code_hash"`
			Current   bool
		}
		Total int
	}
	mustRunJSON(t, &page, "drift", "--json")
	if page.Total != 1 || len(page.Versions) != 1 || page.Versions[0].CodeHash != hash || !page.Versions[0].Current {
		t.Fatalf("drift --json: %+v", page)
	}

	t.Setenv("PROCGRAPH_TOKEN", agent)
	code, _, errOut = runMain(t, "accept-drift", readOnlyName, hash, "--reason", "x")
	if code != 1 || !strings.Contains(errOut, "403") || !strings.Contains(errOut, "grant") {
		t.Fatalf("accept-drift without the grant scope: exit %d, %s", code, errOut)
	}
	t.Setenv("PROCGRAPH_TOKEN", root)
	var ans struct{ Decision map[string]any }
	mustRunJSON(t, &ans, "accept-drift", readOnlyName, hash, "--reason", "string ids are fine", "--json")
	if ans.Decision["kind"] != "drift" || ans.Decision["actor"] != "root" {
		t.Fatalf("accept-drift answered %+v", ans)
	}
	mustRunJSON(t, &page, "drift", "--json")
	if page.Total != 0 {
		t.Fatalf("drift after accept: %+v", page)
	}
	code, _, errOut = runMain(t, "accept-drift", readOnlyName, hash)
	if code != 1 || !strings.Contains(errOut, "not stale") {
		t.Fatalf("accept-drift of a version not stale: exit %d, %s", code, errOut)
	}
	up.mustSeeNothing(t, "drift commands")
}
