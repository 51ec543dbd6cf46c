// Package cypher holds every Cypher statement procgraph's Neo4j store runs, as
// .cypher files embedded at build time: the schema (constraints and indexes,
// applied idempotently at start) and the parameterised queries. Statements
// take parameters only; nothing is ever built from strings at run time.
//
// A part several queries share lives once in fragments/NAME.cypher; a
// query line "#include NAME" is replaced by it when the files are loaded
// (Expand), once, at start.
//
// A file whose first line says "Code generated" is written by a generator
// and is not edited by hand: the class files (fragments/class_key.cypher,
// fragments/class_create.cypher, queries/classes.cypher) come from
// procedures.ClassFields by go generate ./procedures (docs/adr/0034).
package cypher

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

//go:embed schema/*.cypher queries/*.cypher fragments/*.cypher
var files embed.FS

// Schema is the schema statements in order (file name, then position in the
// file). Each one is idempotent (IF NOT EXISTS).
var Schema = mustSchema()

var queries = mustQueries()

// Query returns the query stored in queries/<name>.cypher. It panics for an
// unknown name: query names are constants of the code that runs them.
func Query(name string) string {
	q, ok := queries[name]
	if !ok {
		panic(fmt.Sprintf("cypher: no query %q", name))
	}
	return q
}

// QueryNames returns the names of every stored query, sorted.
func QueryNames() []string {
	names := make([]string, 0, len(queries))
	for n := range queries {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func mustSchema() []string {
	names, err := fs.Glob(files, "schema/*.cypher")
	if err != nil {
		panic(err)
	}
	sort.Strings(names)
	var stmts []string
	for _, n := range names {
		b, err := files.ReadFile(n)
		if err != nil {
			panic(err)
		}
		stmts = append(stmts, Split(string(b))...)
	}
	return stmts
}

func mustQueries() map[string]string {
	names, err := fs.Glob(files, "queries/*.cypher")
	if err != nil {
		panic(err)
	}
	qs := make(map[string]string, len(names))
	for _, n := range names {
		b, err := files.ReadFile(n)
		if err != nil {
			panic(err)
		}
		stmts := Split(Expand(string(b)))
		if len(stmts) != 1 {
			panic(fmt.Sprintf("cypher: %s holds %d statements, want 1", n, len(stmts)))
		}
		qs[strings.TrimSuffix(path.Base(n), ".cypher")] = stmts[0]
	}
	return qs
}

// includePrefix starts a line that Expand replaces by a fragment.
const includePrefix = "#include "

// Expand replaces every line "#include NAME" of text (leading spaces
// allowed) by fragments/NAME.cypher, itself expanded. It panics for an
// unknown fragment: fragment names are constants of the query files.
func Expand(text string) string {
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		name, ok := strings.CutPrefix(strings.TrimSpace(line), includePrefix)
		if !ok {
			continue
		}
		b, err := files.ReadFile("fragments/" + strings.TrimSpace(name) + ".cypher")
		if err != nil {
			panic(fmt.Sprintf("cypher: no fragment %q", name))
		}
		lines[i] = strings.TrimRight(Expand(string(b)), "\n")
	}
	return strings.Join(lines, "\n")
}

// Split splits a .cypher file into its statements: it drops whole-line //
// comments and blank lines, and ends a statement at a line ending with ';'.
func Split(text string) []string {
	var stmts []string
	var cur []string
	flush := func() {
		if s := strings.TrimSpace(strings.Join(cur, "\n")); s != "" {
			stmts = append(stmts, s)
		}
		cur = cur[:0]
	}
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "//") {
			continue
		}
		if strings.HasSuffix(t, ";") {
			cur = append(cur, strings.TrimSuffix(strings.TrimRight(line, " \t\r"), ";"))
			flush()
			continue
		}
		cur = append(cur, strings.TrimRight(line, " \t\r"))
	}
	flush()
	return stmts
}
