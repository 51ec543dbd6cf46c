package main

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/procedures"
)

// TestToolDescriptionBoundEveryPath: one bound for a tool's description
// (fields.ToolDesc) on every path that takes a catalogue. serve --tools
// refuses a catalogue file whose description is 20 KB (it started with it
// before, while PUT /v1/tools refused the same tool), naming the file, the
// tool and the bound; a description at the bound starts, and PUT /v1/tools
// refuses the 20 KB one on that server, whose catalogue stays as it was.
func TestToolDescriptionBoundEveryPath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := fileWriter(t, dir)
	catalogue := func(desc string) string {
		b, err := json.Marshal(map[string]any{"tools": []procedures.Tool{
			{Name: "get_jobs", ReadOnly: true},
			{Name: "long_tool", Description: desc},
		}})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	long := strings.Repeat("d", 20<<10)
	longFile := write("long.json", catalogue(long))
	_, err := startMain(t, serverOpts{Data: filepath.Join(dir, "long.db"), NoCatalogue: true, Extra: []string{"--tools", longFile}}.args(t))
	if err == nil || !strings.Contains(err.Error(), longFile) || !strings.Contains(err.Error(), `"long_tool"`) ||
		!strings.Contains(err.Error(), strconv.Itoa(fields.MaxToolDescBytes)) {
		t.Fatalf("serve --tools with a 20 KB description: %v; want refused naming the file, the tool and the bound", err)
	}

	atBound := strings.Repeat("d", fields.MaxToolDescBytes)
	s := mustServe(t, serverOpts{Data: filepath.Join(dir, "bound.db"), NoCatalogue: true, Extra: []string{"--tools", write("bound.json", catalogue(atBound))}})
	var cat procedures.Catalogue
	s.get(t, "/v1/tools").Into(t, &cat)
	if len(cat.Tools) != 2 || cat.Tools[1].Description != atBound {
		t.Fatalf("a description at the bound: the catalogue has %d tools", len(cat.Tools))
	}
	var file struct {
		Tools []procedures.Tool `json:"tools"`
	}
	if err := json.Unmarshal([]byte(catalogue(long)), &file); err != nil {
		t.Fatal(err)
	}
	mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/tools", Body: map[string]any{"tools": file.Tools}}), 400)
	var after procedures.Catalogue
	s.get(t, "/v1/tools").Into(t, &after)
	if after.Revision != cat.Revision {
		t.Fatalf("a refused PUT changed the catalogue: %s, was %s", after.Revision, cat.Revision)
	}
}
