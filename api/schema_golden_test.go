package api

import (
	"path/filepath"
	"testing"

	"github.com/procgraph/procgraph/internal/golden"
)

// TestOpenAPIGolden: /openapi.json stays as testdata/openapi.golden.json
// holds it. Objects' keys are sorted (a schema's meaning does not depend
// on their order); every value is pinned. Regenerate with
// go test ./api -run TestOpenAPIGolden -update and review the diff.
func TestOpenAPIGolden(t *testing.T) {
	srv, err := New(Config{MCPPaths: map[string]string{"/mcp": "MCP, automatic phase", "/mcp/interactive": "MCP, interactive phase"}})
	if err != nil {
		t.Fatal(err)
	}
	golden.Match(t, filepath.Join("testdata", "openapi.golden.json"), golden.JSON(t, srv.OpenAPI()))
}
