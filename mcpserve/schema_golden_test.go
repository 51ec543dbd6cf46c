package mcpserve

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/internal/golden"
	"github.com/procgraph/procgraph/replay"
)

// TestFixedToolsGolden: the fixed tools as a client lists them (name,
// description, input schema, annotations) on both endpoints stay as
// testdata/tools.golden.json holds them. Objects' keys are sorted (a JSON
// Schema's meaning does not depend on their order); every value is pinned.
// Regenerate with go test ./mcpserve -run TestFixedToolsGolden -update.
func TestFixedToolsGolden(t *testing.T) {
	e := newEnvWith(t, false, func(c *Config, st *embedded.Store) {
		c.Gate = gate.New(c.Replayer.(*replay.Replayer), st, gate.Options{})
	})
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
	golden.Match(t, filepath.Join("testdata", "tools.golden.json"), golden.JSON(t, got))
}
