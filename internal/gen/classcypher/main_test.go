package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/procgraph/procgraph/procedures"
)

// TestWrittenFilesAreCurrent: the class files under cypher/ are what
// classcypher writes from procedures.ClassFields now, so a field added to
// the table (or a hand edit of a generated file) fails here until go
// generate ./procedures has run.
func TestWrittenFilesAreCurrent(t *testing.T) {
	for p, want := range files(procedures.ClassFields) {
		got, err := os.ReadFile(filepath.Join("..", "..", "..", "cypher", filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("cypher/%s is not what procedures.ClassFields gives (run go generate ./procedures):\n%s", p, want)
		}
	}
}
