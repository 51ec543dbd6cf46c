package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// examplesDir is examples/procedures, resolved before any test changes
// directory.
var examplesDir = func() string {
	abs, _ := filepath.Abs("../../examples/procedures")
	return abs
}()

// mustCaptureExamples captures every procedure in examples/procedures, each
// under cause (and, for the first, under a second cause, so a cause links
// several procedures), and returns their names in file order.
func mustCaptureExamples(tb testing.TB, s *server, cause string) []string {
	tb.Helper()
	files, err := os.ReadDir(examplesDir)
	if err != nil {
		tb.Fatalf("the shared examples are missing: %v", err)
	}
	var names []string
	for _, f := range files {
		code, err := os.ReadFile(filepath.Join(examplesDir, f.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		dialect := "starlark"
		if strings.HasSuffix(f.Name(), ".py") {
			dialect = "python-async"
		}
		out := s.mustCapture(tb, map[string]any{"code": string(code), "dialect": dialect,
			"summary": "example " + f.Name(), "cause": map[string]any{"name": cause, "description": "the examples' cause"}}, nil)
		names = append(names, procOf(tb, out)["name"].(string))
	}
	sort.Strings(names)
	return names
}

// requireCommand returns the path of an external program a test needs; it
// skips the test (with how to install it) when missing, and fails it when
// CI=true (.ci/run installs it).
func requireCommand(tb testing.TB, name, install string) string {
	tb.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		tb.Fatalf("CI=true and %s is missing (.ci/run installs it: %s)", name, install)
	}
	tb.Skipf("%s is missing; install it with: %s", name, install)
	return ""
}
