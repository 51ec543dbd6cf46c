package signature

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"go.starlark.net/syntax"

	"github.com/procgraph/procgraph/internal/block"
)

// TestEscapesAsCPython: in dialect python-async a string literal has the
// value CPython gives it (testdata/pycompat/escapes.json, written by
// gen_escapes.py), including the escapes CPython keeps as they are, with a
// warning where CPython warns; in dialect starlark those stay errors.
func TestEscapesAsCPython(t *testing.T) {
	b, err := os.ReadFile("testdata/pycompat/escapes.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Literal  string `json:"literal"`
		Value    string `json:"value"`
		Warnings int    `json:"warnings"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.Literal, func(t *testing.T) {
			code := "x = " + tc.Literal + "\nreturn tools.search_logs(pattern=x)"
			a, err := Analyze(code, PythonAsync)
			if err != nil {
				t.Fatalf("python-async: %v", err)
			}
			f, err := block.Parse("p", a.Source)
			if err != nil {
				t.Fatalf("the rewritten source does not parse: %v\n%s", err, a.Source)
			}
			lit := f.Stmts[0].(*syntax.DefStmt).Body[0].(*syntax.AssignStmt).RHS.(*syntax.Literal)
			if lit.Value != tc.Value {
				t.Fatalf("value %q, CPython %q", lit.Value, tc.Value)
			}
			escapes := 0
			for _, w := range a.Warnings {
				if strings.Contains(w.Message, "invalid escape sequence") {
					escapes++
					if w.Line != 1 || !strings.Contains(w.Message, "line 1, column") {
						t.Fatalf("warning not on line 1: %+v", w)
					}
				}
			}
			if tc.Warnings > 0 && escapes == 0 {
				t.Fatalf("CPython warns, we do not: %+v", a.Warnings)
			}
			if escapes > 0 && !strings.Contains(tc.Value, `\`) {
				t.Fatalf("a warning, but no backslash was kept: %+v", a.Warnings)
			}
			if escapes > 0 {
				if _, err := Analyze(code, Starlark); err == nil {
					t.Fatalf("dialect starlark accepted %s", tc.Literal)
				}
			}
		})
	}
}

// TestEscapeWarningPositions: each kept backslash is warned at its own line
// and column, and errors after it keep the positions of the code as
// written.
func TestEscapeWarningPositions(t *testing.T) {
	code := "p = \"\\d\" + 'x\\q'\ns = \"\"\"a\n  \\[b\"\"\"\nreturn tools.search_logs(pattern=p, s=s)"
	a, err := Analyze(code, PythonAsync)
	if err != nil {
		t.Fatal(err)
	}
	var got [][2]int
	for _, w := range a.Warnings {
		got = append(got, [2]int{w.Line, w.Column})
	}
	want := [][2]int{{1, 6}, {1, 14}, {3, 3}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("warnings at %v, want %v: %+v", got, want, a.Warnings)
	}
	// A syntax error after two kept backslashes on the same line is
	// reported at its column in the code as written.
	_, err = Analyze("p = \"\\d\\d\" + tools.a(x=1) + = 2", PythonAsync)
	e, ok := err.(*Error)
	if !ok || e.Line != 1 || e.Column != 29 {
		t.Fatalf("error %#v, want line 1 column 29", err)
	}
}
