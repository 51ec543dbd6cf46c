package signature

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"go.starlark.net/syntax"

	"github.com/procgraph/procgraph/internal/blocksyntax"
)

// TestEscapesAsCPython: in dialect python-async a string literal has the
// value CPython gives it (testdata/pycompat/escapes.json, written by
// gen_escapes.py), including the escapes CPython keeps as they are, with a
// warning where CPython warns; in dialect starlark those stay errors (but
// \u and \U in bytes, which Starlark reads as escapes of its own). Bytes
// literals too: there \u, \U and \N are not escapes for CPython.
func TestEscapesAsCPython(t *testing.T) {
	b, err := os.ReadFile("testdata/pycompat/escapes.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Literal  string `json:"literal"`
		Value    string `json:"value"`
		Warnings int    `json:"warnings"`
		Bytes    bool   `json:"bytes"` // Value holds the bytes as latin-1
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		if tc.Bytes {
			b := make([]byte, 0, len(tc.Value))
			for _, r := range tc.Value {
				b = append(b, byte(r))
			}
			tc.Value = string(b)
		}
		t.Run(tc.Literal, func(t *testing.T) {
			code := "x = " + tc.Literal + "\nreturn tools.search_logs(pattern=x)"
			a, err := Analyze(code, PythonAsync)
			if err != nil {
				t.Fatalf("python-async: %v", err)
			}
			f, err := blocksyntax.Parse("p", a.Source)
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
			// Starlark reads \u and \U in bytes as escapes of its own: there
			// the starlark dialect has another value, not an error.
			starlarkEscape := tc.Bytes && strings.ContainsAny(tc.Literal, "uU")
			if escapes > 0 && !starlarkEscape {
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

// FuzzEscapes: whenever dialect python-async accepts a string literal, its
// value is the one CPython gives it (pyUnescape, written from the Python
// reference, is the oracle), and a backslash CPython keeps is warned about.
// It is seeded with the CPython-checked literals.
func FuzzEscapes(f *testing.F) {
	for _, s := range []string{`\d+`, `\w+\.\s*`, `\\d`, `\\\d`, `a\qb`, `\8\9`, `\é`, `\x41\101\u0042\t`, `\{\}\-\/`, `\N{DIGIT ONE}`, `C:\Users`, `\`, `\0\7\77\177`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if strings.ContainsAny(body, "\"\r\n\x00") || !utf8.ValidString(body) || strings.HasSuffix(body, `\`) && !strings.HasSuffix(body, `\\`) {
			return // not the body of one single-quoted literal
		}
		code := "x = \"" + body + "\"\nreturn tools.search_logs(pattern=x)"
		a, err := Analyze(code, PythonAsync)
		if err != nil {
			return // Starlark cannot hold every value CPython can (\N{...}, non-ASCII \x and octal)
		}
		file, err := blocksyntax.Parse("p", a.Source)
		if err != nil {
			t.Fatalf("the rewritten source does not parse: %v\n%s", err, a.Source)
		}
		got := file.Stmts[0].(*syntax.DefStmt).Body[0].(*syntax.AssignStmt).RHS.(*syntax.Literal).Value
		want, kept := pyUnescape(body)
		if got != want {
			t.Fatalf("%q: value %q, CPython's %q", body, got, want)
		}
		warned := false
		for _, w := range a.Warnings {
			warned = warned || strings.Contains(w.Message, "invalid escape sequence")
		}
		if warned != kept {
			t.Fatalf("%q: warned %v, CPython keeps a backslash: %v", body, warned, kept)
		}
	})
}

// pyUnescape is what CPython makes of the body of a non-raw str literal
// (the escapes Starlark also reads, and the ones CPython keeps as they
// are); kept reports a kept backslash. It is the oracle of FuzzEscapes,
// written from the Python reference, not from the rewrite.
func pyUnescape(body string) (value string, kept bool) {
	var b strings.Builder
	simple := map[byte]byte{'\\': '\\', '\'': '\'', '"': '"', 'a': 7, 'b': 8, 'f': 12, 'n': 10, 'r': 13, 't': 9, 'v': 11}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' || i+1 == len(body) {
			b.WriteByte(c)
			continue
		}
		n := body[i+1]
		switch {
		case simple[n] != 0:
			b.WriteByte(simple[n])
			i++
		case n >= '0' && n <= '7':
			v, j := 0, i+1
			for ; j < len(body) && j < i+4 && body[j] >= '0' && body[j] <= '7'; j++ {
				v = v*8 + int(body[j]-'0')
			}
			b.WriteRune(rune(v))
			i = j - 1
		case n == 'x' || n == 'u' || n == 'U':
			size := map[byte]int{'x': 2, 'u': 4, 'U': 8}[n]
			v, err := strconv.ParseUint(body[i+2:min(i+2+size, len(body))], 16, 32)
			if err != nil || i+2+size > len(body) {
				return "", false // a SyntaxError in CPython
			}
			b.WriteRune(rune(v))
			i += 1 + size
		case n == 'N':
			return "", false // \N{name}: not modelled
		default:
			kept = true
			b.WriteByte('\\') // the next character is written by the loop
		}
	}
	return b.String(), kept
}

// BenchmarkAnalyzeEscapes: a python-async procedure with regexes written
// the way models write them ("\d+": kept backslashes, rewritten and warned
// about) against the same procedure with raw strings (nothing to rewrite).
func BenchmarkAnalyzeEscapes(b *testing.B) {
	const tmpl = "errors = await tools.search_logs(task_id=task_id, pattern=%s)\n" +
		"dates = await tools.search_logs(task_id=task_id, pattern=%s)\n" +
		"ids = await tools.get_task_jobs_summary(task_id=task_id, match=%s)\n" +
		"return {\"errors\": errors, \"dates\": dates, \"ids\": ids}\n"
	for _, tc := range []struct{ name, a, b, c string }{
		{"kept backslashes", `"^\s*ERROR\s+\[(\d+)\]"`, `"\d{4}-\d{2}-\d{2}"`, `"job_\w+\.log"`},
		{"raw strings", `r"^\s*ERROR\s+\[(\d+)\]"`, `r"\d{4}-\d{2}-\d{2}"`, `r"job_\w+\.log"`},
	} {
		code := fmt.Sprintf(tmpl, tc.a, tc.b, tc.c)
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Analyze(code, PythonAsync); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
