package signature

import (
	"errors"
	"strings"
	"testing"
)

// lineSeparators are the characters Python's splitlines ends a line at and
// Starlark's scanner does not (docs/design.md "What an authorization binds to").
var lineSeparators = []struct{ name, sep string }{
	{"VT", "\v"}, {"FF", "\f"}, {"FS", "\x1c"}, {"GS", "\x1d"}, {"RS", "\x1e"},
	{"NEL", "\u0085"}, {"LS", "\u2028"}, {"PS", "\u2029"}, {"lone CR", "\r"},
}

// SeparatorTwin returns the block of issue 19 with sep ending the comment
// line for code_hash only: read-only for Starlark (kill_job is inside the
// comment), while with "\n" instead of sep it calls kill_job.
func SeparatorTwin(sep string) string {
	return "x = tools.get_task_jobs_summary(task_id=1)\n# note" + sep + "tools.kill_job(panda_id=666)\nreturn x\n"
}

// TestLineSeparatorsRefused: every such separator outside a string literal,
// and a CR not in CRLF, is refused with feature line_separator at its
// position, in both dialects; the twin with a newline has the same code
// hash (that is why it must be refused).
func TestLineSeparatorsRefused(t *testing.T) {
	for _, d := range []Dialect{Starlark, PythonAsync} {
		for _, s := range lineSeparators {
			t.Run(string(d)+"/"+s.name, func(t *testing.T) {
				code := SeparatorTwin(s.sep)
				if CodeHash(code) != CodeHash(SeparatorTwin("\n")) {
					t.Fatalf("the twins' code hashes differ: the case tests nothing")
				}
				_, err := Analyze(code, d)
				var e *Error
				if !errors.As(err, &e) || e.Feature != "line_separator" || e.Line != 2 || e.Column != 7 {
					t.Fatalf("Analyze = %+v, want feature line_separator at 2:7", err)
				}
				for _, other := range []string{
					"x = tools.a()" + s.sep + "\n",                    // at the end of a statement
					"x = tools.a(k=1," + s.sep + " j=2)\n",            // inside brackets
					"if True:\n" + s.sep + "  x = tools.a()\n",        // as indentation
					"x = tools.a()\n# a comment ending in it" + s.sep, // at the end of the code
					"x = tools.a()  # " + s.sep + "\n",                // inside a comment
				} {
					if strings.Contains(other, "\r\n") {
						continue // CRLF is a line break
					}
					if _, err := Analyze(other, d); !errors.As(err, &e) || e.Feature != "line_separator" {
						t.Errorf("Analyze(%q) = %v, want feature line_separator", other, err)
					}
				}
			})
		}
	}
}

// TestLineSeparatorsInStrings: inside a string literal the separators are
// data, kept (a lone CR is refused everywhere: a single-quoted string
// cannot hold one, and a triple-quoted one keeps it with CRLF only).
func TestLineSeparatorsInStrings(t *testing.T) {
	for _, d := range []Dialect{Starlark, PythonAsync} {
		for _, s := range lineSeparators {
			if s.sep == "\r" {
				continue
			}
			for _, code := range []string{
				"x = tools.a(s=\"a" + s.sep + "b\")\n",
				"x = tools.a(s='''a\n" + s.sep + "\nb''')\n",
			} {
				if _, err := Analyze(code, d); err != nil {
					t.Errorf("%s %s: Analyze(%q) = %v, want it accepted", d, s.name, code, err)
				}
			}
		}
		for _, code := range []string{"x = tools.a()\r\nreturn x\r\n", "x = tools.a(s='''a\r\nb''')\r\n"} {
			if _, err := Analyze(code, d); err != nil {
				t.Errorf("%s: CRLF: Analyze(%q) = %v, want it accepted", d, code, err)
			}
		}
		if _, err := Analyze("x = tools.a(s='''a\rb''')\n", d); err == nil {
			t.Errorf("%s: a lone CR inside a triple-quoted string was accepted", d)
		}
	}
}

// StringTwins are pairs of blocks that code_hash merges (it strips trailing
// white space per line and drops blank lines, inside strings too) but that
// are different programs: the statement hash tells them apart.
var StringTwins = []struct{ Name, A, B string }{
	{"blank line in a triple-quoted string",
		"x = tools.a(note='''one\ntwo''')\nreturn x\n",
		"x = tools.a(note='''one\n\ntwo''')\nreturn x\n"},
	{"trailing spaces in a triple-quoted string",
		"x = tools.a(note='''one\ntwo''')\nreturn x\n",
		"x = tools.a(note='''one   \ntwo''')\nreturn x\n"},
	{"a separator inside a string, spaces before it",
		"x = tools.a(note='one\x1ctwo')\nreturn x\n",
		"x = tools.a(note='one  \x1ctwo')\nreturn x\n"},
}

// TestStatementHash: the twins share a code hash and differ in statement
// hash, in both dialects; comments, blank lines and trailing white space
// outside strings, and the line breaks' style, do not change it.
func TestStatementHash(t *testing.T) {
	for _, d := range []Dialect{Starlark, PythonAsync} {
		for _, tw := range StringTwins {
			a, b := MustAnalyze(t, tw.A, d), MustAnalyze(t, tw.B, d)
			if a.CodeHash != b.CodeHash {
				t.Fatalf("%s %s: the twins' code hashes differ: the case tests nothing", d, tw.Name)
			}
			if a.StatementHash == b.StatementHash || !validHash.MatchString(a.StatementHash) {
				t.Errorf("%s %s: statement hashes %q and %q, want two different hashes", d, tw.Name, a.StatementHash, b.StatementHash)
			}
		}
		base := MustAnalyze(t, "x = tools.a(k=1)\nif x:\n    return x\nreturn None\n", d)
		for _, same := range []string{
			"# a comment\nx = tools.a(k=1)  # another\n\nif x:\n    return x   \n\nreturn None",
			"x = tools.a(k=1)\r\nif x:\r\n    return x\r\nreturn None\r\n",
			"x = tools.a(k = 1)\nif x:\n    return x\nreturn None\n",
		} {
			if got := MustAnalyze(t, same, d).StatementHash; got != base.StatementHash {
				t.Errorf("%s: statement hash of %q = %s, want %s", d, same, got, base.StatementHash)
			}
		}
		for _, other := range []string{
			"x = tools.a(k=1)\nif x:\n    return x\n    return None\n", // indentation is structure
			"x = tools.a(k=2)\nif x:\n    return x\nreturn None\n",
			"x = tools.a(k='1')\nif x:\n    return x\nreturn None\n",
		} {
			if got := MustAnalyze(t, other, d).StatementHash; got == base.StatementHash {
				t.Errorf("%s: %q has the statement hash of another program", d, other)
			}
		}
	}
}

// MustAnalyze is Analyze, failing tb on an error.
func MustAnalyze(tb testing.TB, code string, d Dialect) *Analysis {
	tb.Helper()
	a, err := Analyze(code, d)
	if err != nil {
		tb.Fatalf("Analyze(%q, %s): %v", code, d, err)
	}
	return a
}

// FuzzTwins: two blocks that Analyze accepts with the same code hash and
// statement hash are one program: the same signature, parameters and
// opacity. Seeded with the twins above.
func FuzzTwins(f *testing.F) {
	for _, s := range lineSeparators {
		f.Add(SeparatorTwin(s.sep), SeparatorTwin("\n"), false)
		f.Add(SeparatorTwin(s.sep), SeparatorTwin("\n"), true)
	}
	for _, tw := range StringTwins {
		f.Add(tw.A, tw.B, false)
		f.Add(tw.A, strings.ReplaceAll(tw.B, "\n", "\r\n"), true)
	}
	f.Fuzz(func(t *testing.T, a, b string, pythonAsync bool) {
		d := Starlark
		if pythonAsync {
			d = PythonAsync
		}
		x, errA := Analyze(a, d)
		y, errB := Analyze(b, d)
		if errA != nil || errB != nil || x.CodeHash != y.CodeHash || x.StatementHash != y.StatementHash {
			return
		}
		if !slicesEqual(x.Signature, y.Signature) || !slicesEqual(x.Parameters, y.Parameters) || x.Opaque != y.Opaque {
			t.Fatalf("one code hash and statement hash, two programs:\n%q: %v %v\n%q: %v %v", a, x.Signature, x.Parameters, b, y.Signature, y.Parameters)
		}
	})
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
