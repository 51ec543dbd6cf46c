package signature

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestHostileInput feeds adversarial code to Analyze: each case must end
// quickly with the expected outcome and never panic.
func TestHostileInput(t *testing.T) {
	call := "x = tools.get_task(task_id=task_id)\n"
	pad := func(n int) string { // call followed by a comment line, n bytes in all
		return call + "#" + strings.Repeat("x", n-len(call)-1)
	}
	cases := []struct {
		name    string
		code    string
		dialect Dialect
		feature string // "" means accepted
	}{
		{"exactly max size", pad(MaxCodeBytes), Starlark, ""},
		{"max size plus one", pad(MaxCodeBytes + 1), Starlark, "code_size"},
		{"huge", strings.Repeat("x", 10*MaxCodeBytes), PythonAsync, "code_size"},
		{"nested brackets 60 deep", "return tools.a(x=" + strings.Repeat("[", 59) + strings.Repeat("]", 59) + ")\n", Starlark, ""},
		{"nested brackets 90 deep (parser limit)", "return tools.a(x=" + strings.Repeat("[", 89) + strings.Repeat("]", 89) + ")\n", Starlark, "nesting"},
		{"nested brackets over limit", "return tools.a(x=" + strings.Repeat("[", MaxBracketDepth) + strings.Repeat("]", MaxBracketDepth) + ")\n", Starlark, "nesting"},
		{"only open parens", strings.Repeat("(", MaxCodeBytes), Starlark, "nesting"},
		{"only close parens", strings.Repeat(")", MaxCodeBytes), Starlark, "syntax"},
		{"deep not", call + "return " + strings.Repeat("not ", 15000) + "x\n", Starlark, "nesting"},
		{"deep unary minus", call + "return " + strings.Repeat("-", 30000) + "1\n", Starlark, "nesting"},
		{"nested calls", "return " + strings.Repeat("tools.a(", MaxBracketDepth+1) + strings.Repeat(")", MaxBracketDepth+1) + "\n", Starlark, "nesting"},
		{"long binary chain", call + "return x" + strings.Repeat("+x", 20000) + "\n", Starlark, ""},
		{"long attribute chain", "return tools.a" + strings.Repeat(".b", 20000) + "\n", Starlark, ""},
		{"long call chain", "return tools.a" + strings.Repeat("()", 20000) + "\n", Starlark, ""},
		{"many awaits", "return " + strings.Repeat("await ", 10000) + "tools.a()\n", PythonAsync, ""},
		{"nested gathers", "return " + strings.Repeat("asyncio.gather(", 30) + "tools.a()" + strings.Repeat(")", 30) + "\n", PythonAsync, ""},
		{"nested gathers over limit", "return " + strings.Repeat("asyncio.gather(", 100) + "tools.a()" + strings.Repeat(")", 100) + "\n", PythonAsync, "nesting"},
		{"deep indentation", deepIf(300), Starlark, ""},
		{"many statements", strings.Repeat(call, MaxCodeBytes/len(call)), Starlark, ""},
		{"NUL byte", call + "y = 1\x00\n", Starlark, "encoding"},
		{"NUL in string", call + "y = \"\x00\"\n", PythonAsync, "encoding"},
		{"invalid UTF-8", call + "y = \"\xff\xfe\"\n", Starlark, "encoding"},
		{"truncated rune", call + "y = \xc3", PythonAsync, "encoding"},
		{"BOM", "\ufeff" + call, Starlark, "syntax"},
		{"form feed and vertical tab", call + "\f\vy = 1\n", Starlark, "line_separator"},
		{"unterminated triple at EOF", call + "s = '''", PythonAsync, "syntax"},
		{"backslash at EOF", call + "\\", Starlark, "syntax"},
		{"lone quote", "'", Starlark, "syntax"},
		{"only whitespace", " \t\r\n\r\n  ", Starlark, "empty_signature"},
		{"gather unclosed", "x = asyncio.gather(tools.a(),", PythonAsync, "syntax"},
		{"await at EOF", "x = tools.a()\nawait", PythonAsync, "syntax"},
		{"await before newline", "x = tools.a()\ny = await\n", PythonAsync, "syntax"},
		{"await before paren", "x = tools.a(await)\n", PythonAsync, "syntax"},
		{"asyncio at EOF", "x = tools.a()\nasyncio", PythonAsync, "asyncio"},
		{"asyncio dot at EOF", "x = tools.a()\nasyncio.", PythonAsync, "asyncio"},
		{"gather mismatched bracket", "x = asyncio.gather(tools.a(), b])\n", PythonAsync, "syntax"},
		{"gather without call", "x = tools.a()\ny = asyncio.gather", PythonAsync, "asyncio.gather"},
		{"async at EOF", "x = tools.a()\nasync", PythonAsync, "async"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			a, err := Analyze(c.code, c.dialect)
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
			if c.feature == "" {
				if err != nil {
					t.Fatalf("Analyze: %v", err)
				}
				if len(a.Signature) == 0 {
					t.Fatalf("empty signature: %+v", a)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Analyze = %v, want *Error %q", err, c.feature)
			}
			if e.Feature != c.feature || e.Message == "" || e.Line < 0 || e.Column < 0 {
				t.Fatalf("error %+v, want feature %q", e, c.feature)
			}
		})
	}
}

// deepIf returns a block with n nested if statements around a tool call.
func deepIf(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(strings.Repeat(" ", i) + "if x:\n")
	}
	b.WriteString(strings.Repeat(" ", n) + "tools.a()\n")
	return b.String()
}

func TestParseDialect(t *testing.T) {
	cases := []struct {
		in   string
		want Dialect
		ok   bool
	}{
		{"", Starlark, true},
		{"starlark", Starlark, true},
		{"python-async", PythonAsync, true},
		{"python", "", false},
		{"Starlark", "", false},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseDialect(c.in)
			if c.ok != (err == nil) || got != c.want {
				t.Fatalf("ParseDialect(%q) = %q, %v", c.in, got, err)
			}
			var e *Error
			if err != nil && (!errors.As(err, &e) || e.Feature != "dialect") {
				t.Fatalf("error %v is not a dialect *Error", err)
			}
		})
	}
	if _, err := Analyze("tools.a()", Dialect("cobol")); err == nil {
		t.Fatal("Analyze accepted an unknown dialect")
	}
}
