package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestOfflineCommandsOnNeo4jNeedNoTokens: export, import and audit prune
// with --store neo4j serve nothing, so they never ask for the tokens file
// serve needs; with nothing listening at NEO4J_URI they fail reaching
// Neo4j, and say so.
func TestOfflineCommandsOnNeo4jNeedNoTokens(t *testing.T) {
	t.Setenv("NEO4J_URI", "bolt://127.0.0.1:1")
	t.Setenv("PROCGRAPH_TOKENS_FILE", "")
	dir := t.TempDir()
	src := mustFilledStoreFile(t, dir, 3)
	dumpFile := filepath.Join(dir, "d.jsonl")
	if code, _, errOut := runMain(t, "export", "--store", "embedded", "--data", src, "-o", dumpFile); code != 0 {
		t.Fatalf("export of the embedded store: exit %d: %s", code, errOut)
	}
	cases := []struct {
		name string
		args []string
	}{
		{"export", []string{"export", "--store", "neo4j", "-o", filepath.Join(dir, "out.jsonl")}},
		{"import", []string{"import", dumpFile, "--store", "neo4j"}},
		{"import --merge", []string{"import", dumpFile, "--store", "neo4j", "--merge"}},
		{"audit prune", []string{"audit", "prune", "--store", "neo4j", "--before", "2020-01-01", "-o", filepath.Join(dir, "archive.jsonl")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runMain(t, tc.args...)
			if code == 0 {
				t.Fatalf("exit 0 with no Neo4j listening: %s%s", out, errOut)
			}
			if strings.Contains(errOut, "tokens") {
				t.Fatalf("an offline command asked for tokens: %s", errOut)
			}
			if !strings.Contains(strings.ToLower(errOut), "neo4j") {
				t.Fatalf("the error does not say Neo4j could not be reached: %s", errOut)
			}
		})
	}
}
