package api

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
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
	raw, err := json.Marshal(srv.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "openapi.golden.json")
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
		t.Fatalf("%s differs from /openapi.json (run with -update and review the diff)", path)
	}
}
