package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/graph/embedded"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata golden files from the current output")

// TestFixedToolsGolden: the fixed tools as a client lists them (name,
// description, input schema, annotations) on both endpoints stay as
// testdata/tools.golden.json holds them. Objects' keys are sorted (a JSON
// Schema's meaning does not depend on their order); every value is pinned.
// Regenerate with go test ./mcpserve -run TestFixedToolsGolden -update.
func TestFixedToolsGolden(t *testing.T) {
	e := newEnvWith(t, false, func(c *Config, st *embedded.Store) { c.Gate = gate.New(c.Replayer, st, gate.Options{}) })
	got := map[string]any{}
	for _, path := range []string{"/mcp", "/mcp/interactive"} {
		s := e.connect(path, "operator", nil)
		var tools []any
		for tool, err := range s.Tools(context.Background(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			tools = append(tools, map[string]any{"name": tool.Name, "description": tool.Description,
				"inputSchema": tool.InputSchema, "annotations": tool.Annotations})
		}
		got[path] = tools
	}
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	mustMatchGolden(t, filepath.Join("testdata", "tools.golden.json"), b)
}

// mustMatchGolden compares got with the golden file (rewriting it under
// -update).
func mustMatchGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *updateGolden {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from the answer (run with -update and review the diff):\n%s", path, got)
	}
}
