package mcpdispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/procedures"
)

// TestImport builds catalogues from both transports, trusting the
// annotations or not.
func TestImport(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			u := newUpstream(t, tr)
			src := Source{URL: u.url, Command: u.argv}
			for _, trust := range []bool{true, false} {
				tools, skipped, err := Import(context.Background(), src, trust)
				if err != nil {
					t.Fatal(err)
				}
				if len(skipped) != 0 {
					t.Fatalf("skipped %+v", skipped)
				}
				byName := map[string]procedures.Tool{}
				for _, tool := range tools {
					byName[tool.Name] = tool
				}
				if len(byName) != 12 {
					t.Fatalf("imported %d tools: %+v", len(byName), tools)
				}
				gj := byName["get_jobs"]
				if gj.Description != "test tool get_jobs" || gj.InputSchema["type"] != "object" || gj.InputSchema["properties"] == nil {
					t.Fatalf("get_jobs %+v", gj)
				}
				// Kebab-case names are called by their mapped name.
				for name, wire := range map[string]string{"bad_name": "bad-name", "get_sum": "get-sum", "get_jobs": "get_jobs"} {
					if got := byName[name]; got.UpstreamName != wire || got.Server != "" {
						t.Errorf("%s: upstream_name %q server %q, want %q and none", name, got.UpstreamName, got.Server, wire)
					}
				}
				type cls struct{ ro, ext bool }
				want := map[string]cls{"get_jobs": {true, false}, "fetch_logs": {true, true}, "kill_job": {false, true}, "fail_job": {false, true}}
				for name, w := range want {
					if !trust {
						w = cls{false, true}
					}
					if got := byName[name]; got.ReadOnly != w.ro || got.ExternalAccess != w.ext {
						t.Errorf("trust=%v %s: read_only %v external_access %v, want %v %v", trust, name, got.ReadOnly, got.ExternalAccess, w.ro, w.ext)
					}
				}
			}
			if len(u.rec.Calls()) != 0 {
				t.Fatalf("import called tools: %v", u.rec.Tools())
			}
		})
	}
}

// TestImportCatalogueJSON writes a catalogue file the server accepts.
func TestImportCatalogueJSON(t *testing.T) {
	u := newUpstream(t, "http")
	var out, warn bytes.Buffer
	if err := ImportCatalogueJSON(context.Background(), &out, &warn, Source{URL: u.url}, true); err != nil {
		t.Fatal(err)
	}
	var file struct {
		Tools []procedures.Tool `json:"tools"`
	}
	dec := json.NewDecoder(&out)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		t.Fatal(err)
	}
	c, err := procedures.NewCatalogue(file.Tools)
	if err != nil {
		t.Fatal(err)
	}
	if ro := c.ReadOnlyTools(); strings.Join(ro, ",") != "fetch_logs,get_jobs,get_sum,greet,pid,sleep,strict,wait" {
		t.Fatalf("read-only tools %v", ro)
	}
	if warn.Len() != 0 {
		t.Fatalf("warnings %q", warn.String())
	}
	if err := ImportCatalogueJSON(context.Background(), &out, &warn, Source{}, true); err == nil {
		t.Fatal("no source accepted")
	}
	if err := ImportCatalogueJSON(context.Background(), &out, &warn, Source{URL: "http://127.0.0.1:1/"}, true); err == nil {
		t.Fatal("unreachable source accepted")
	}
}

// TestCatalogueSkipsLongDescriptions: tools import takes a description at
// the catalogue's bound (fields.ToolDesc) and skips a tool whose
// description is past it, saying why: no catalogue would take it (serve
// --tools, PUT /v1/tools), so the file it writes stays one they accept.
func TestCatalogueSkipsLongDescriptions(t *testing.T) {
	listed := []*mcp.Tool{
		{Name: "at_bound", Description: strings.Repeat("d", fields.MaxToolDescBytes)},
		{Name: "past_bound", Description: strings.Repeat("d", 20<<10)},
	}
	tools, skipped, err := Catalogue(listed, false)
	if err != nil || len(tools) != 1 || tools[0].Name != "at_bound" {
		t.Fatalf("imported %+v; want at_bound alone", tools)
	}
	if len(skipped) != 1 || skipped[0].Name != "past_bound" || !strings.Contains(skipped[0].Reason, strconv.Itoa(fields.MaxToolDescBytes)) {
		t.Fatalf("skipped %+v; want past_bound naming the bound", skipped)
	}
	if _, err := procedures.NewCatalogue(tools); err != nil {
		t.Fatalf("the imported tools are not a catalogue: %v", err)
	}
}
