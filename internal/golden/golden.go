// Package golden compares a test's output with a reviewed file under
// testdata (a golden file), and rewrites the file from the output when the
// test runs with -update. The API's OpenAPI document and graph exports and
// the MCP server's tool list are checked this way.
package golden

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata from the current output (then review the diff)")

// Match fails tb unless got is, byte for byte, the file at path. Under
// -update it writes got to path (creating its directory) instead.
func Match(tb testing.TB, path string, got []byte) {
	tb.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		tb.Fatalf("%s differs from the output (run with -update and review the diff):\n%s", path, got)
	}
}

// JSON is v as a golden file holds it: indented by two spaces, every
// object's keys sorted (a JSON Schema's meaning does not depend on their
// order), ending in a newline.
func JSON(tb testing.TB, v any) []byte {
	tb.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		tb.Fatal(err)
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	return append(out, '\n')
}
