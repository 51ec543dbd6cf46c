package signature

import (
	"errors"
	"strings"
	"testing"
)

// TestPositionsPointIntoOriginal checks that error and warning positions
// point into the code as written, also after the python-async rewrite moved
// text within the line. The expected position is that of the first
// occurrence of at in the code, plus skip bytes.
func TestPositionsPointIntoOriginal(t *testing.T) {
	cases := []struct {
		name    string
		code    string
		dialect Dialect
		feature string // "" for a warning
		at      string
		skip    int
	}{
		{"syntax after gather", "x = await asyncio.gather(tools.a(), tools.b()); y = x +\n", PythonAsync, "syntax", "+\n", 1},
		{"syntax after unicode gather", "é = await asyncio.gather(tools.a(q=\"ü\"), tools.b()); z = é +\n", PythonAsync, "syntax", "+\n", 1},
		{"syntax inside gather", "x = await asyncio.gather(tools.a(), tools.b() +)\n", PythonAsync, "syntax", "+)", 1},
		{"syntax after await", "x = await   tools.a(); y = )\n", PythonAsync, "syntax", ")\n", 0},
		{"syntax after async def", "async   def f(): return tools.a()\nx = f( = 1\n", PythonAsync, "syntax", "= 1", 0},
		{"starred gather", "x = await asyncio.gather(*tools.a()) +\n", PythonAsync, "syntax", "+\n", 1},
		{"warning after gather", "r = await asyncio.gather(tools.a(q=\"ü\"), dir(tools))\n", PythonAsync, "", "tools))", 0},
		{"warning second line", "x = await tools.a()\ny = await asyncio.gather(x, tools)\n", PythonAsync, "", "tools)", 0},
		{"crlf", "x = tools.a()\r\ny = x +\r\n", Starlark, "syntax", "+\r", 1},
		{"cr only async", "x = await tools.a()\ry = await x +\r", PythonAsync, "line_separator", "\ry", 0},
		{"tab", "x = tools.a()\nif x:\n\ty = x +\n", Starlark, "syntax", "+\n", 1},
		{"feature in async", "x = await asyncio.gather(tools.a())\ntry:\n  pass\n", PythonAsync, "try", "try", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			i := strings.Index(c.code, c.at)
			if i < 0 {
				t.Fatalf("bad case: %q not in code", c.at)
			}
			wantLine, wantCol := lineColOf(c.code, i+c.skip)
			a, err := Analyze(c.code, c.dialect)
			var line, col int
			if c.feature != "" {
				var e *Error
				if !errors.As(err, &e) || e.Feature != c.feature {
					t.Fatalf("Analyze = %v, %v; want *Error with feature %q", a, err, c.feature)
				}
				line, col = e.Line, e.Column
			} else {
				if err != nil || len(a.Warnings) != 1 {
					t.Fatalf("Analyze = %+v, %v; want one warning", a, err)
				}
				line, col = a.Warnings[0].Line, a.Warnings[0].Column
			}
			if line != wantLine || col != wantCol {
				t.Errorf("position %d:%d, want %d:%d", line, col, wantLine, wantCol)
			}
		})
	}
}

func TestLineColOf(t *testing.T) {
	cases := []struct {
		name      string
		s         string
		off       int
		line, col int
	}{
		{"start", "abc", 0, 1, 1},
		{"ascii", "abc", 2, 1, 3},
		{"second line", "a\nbc", 3, 2, 2},
		{"crlf", "a\r\nb", 3, 2, 1},
		{"cr", "a\rb", 2, 2, 1},
		{"runes", "éé\nüx", 7, 2, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, col := lineColOf(c.s, c.off)
			if l != c.line || col != c.col {
				t.Errorf("lineColOf = %d:%d, want %d:%d", l, col, c.line, c.col)
			}
			if off := offsetOf(c.s, c.line, c.col); off != c.off {
				t.Errorf("offsetOf = %d, want %d", off, c.off)
			}
		})
	}
}

// TestLineIndex: lineIndex gives offsetOf and lineColOf's answers at every
// position, line breaks \n, \r\n and \r and multi-byte runes included.
func TestLineIndex(t *testing.T) {
	for _, s := range []string{"", "a", "\n", "ab\ncd", "ab\r\ncd\r\n", "x\ry\r\rz", "é=1\n  ü(\"ß\")\r\n\n€", "\r\n\r\n", "a\n\r\nb\r"} {
		li := newLineIndex(s)
		for off := 0; off <= len(s); off++ {
			wl, wc := lineColOf(s, off)
			if l, c := li.lineCol(off); l != wl || c != wc {
				t.Errorf("%q: lineCol(%d) = %d:%d, lineColOf %d:%d", s, off, l, c, wl, wc)
			}
		}
		for line := -1; line <= strings.Count(s, "\n")+strings.Count(s, "\r")+2; line++ {
			for col := -1; col <= len(s)+2; col++ {
				if got, want := li.offset(line, col), offsetOf(s, line, col); got != want {
					t.Errorf("%q: offset(%d, %d) = %d, offsetOf %d", s, line, col, got, want)
				}
			}
		}
	}
}
