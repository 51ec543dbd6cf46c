package text

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// visibleCase is one case of testdata/visible.json.
type visibleCase struct {
	Name     string  `json:"name"`
	In       string  `json:"in"`
	Want     string  `json:"want"`
	WantLine *string `json:"want_line"`
}

// MustVisibleCases reads testdata/visible.json, the cases the console's
// test shares.
func MustVisibleCases(tb testing.TB) []visibleCase {
	tb.Helper()
	b, err := os.ReadFile("testdata/visible.json")
	if err != nil {
		tb.Fatal(err)
	}
	var f struct {
		Cases []visibleCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		tb.Fatal(err)
	}
	return f.Cases
}

func TestVisible(t *testing.T) {
	cases := append(MustVisibleCases(t),
		visibleCase{Name: "invalid UTF-8 byte", In: "a\xffb", Want: `a\udcffb`},
		visibleCase{Name: "truncated sequence", In: "\xe2\x80", Want: `\udce2\udc80`},
		visibleCase{Name: "encoded surrogate", In: "\xed\xa0\x80", Want: `\udced\udca0\udc80`},
		visibleCase{Name: "overlong slash", In: "\xc0\xaf", Want: `\udcc0\udcaf`},
		visibleCase{Name: "valid U+FFFD stays", In: "\uFFFD", Want: "\uFFFD"},
	)
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			if got := Visible(tc.In); got != tc.Want {
				t.Errorf("Visible(%q) = %q, want %q", tc.In, got, tc.Want)
			}
			wantLine := tc.Want
			if tc.WantLine != nil {
				wantLine = *tc.WantLine
			}
			if got := VisibleLine(tc.In); got != wantLine {
				t.Errorf("VisibleLine(%q) = %q, want %q", tc.In, got, wantLine)
			}
		})
	}
}

// TestVisibleUnchanged: text without anything to escape is returned as it
// is, without a copy.
func TestVisibleUnchanged(t *testing.T) {
	s := "x = tools.get_task_jobs_summary(task_id=1)\n\treturn x é"
	if got := Visible(s); got != s {
		t.Fatalf("Visible(%q) = %q", s, got)
	}
	if n := testing.AllocsPerRun(100, func() { _ = Visible(s) }); n != 0 {
		t.Fatalf("Visible allocates %v times for text that needs no escape", n)
	}
}

// FuzzVisible: whatever the text, the rendering holds no character a
// terminal or a bidi algorithm acts on, only valid UTF-8, and reads back
// to exactly the text (the escapes are unambiguous).
func FuzzVisible(f *testing.F) {
	for _, tc := range MustVisibleCases(f) {
		f.Add(tc.In)
	}
	f.Add("a\xffb\\u\\\\u\\u{e0001}\xed\xa0\x80")
	f.Fuzz(func(t *testing.T, s string) {
		for _, line := range []bool{false, true} {
			v := visible(s, line)
			if !utf8.ValidString(v) {
				t.Fatalf("visible(%q, %v) = %q: not UTF-8", s, line, v)
			}
			for _, r := range v {
				if Hidden(r) || (line && (r == '\n' || r == '\t')) {
					t.Fatalf("visible(%q, %v) = %q holds %U", s, line, v, r)
				}
			}
			back, err := unvisible(v)
			if err != nil || back != s {
				t.Fatalf("visible(%q, %v) = %q reads back as %q (%v)", s, line, v, back, err)
			}
		}
	})
}

// unvisible reads a rendering back: every \u starts an escape.
func unvisible(v string) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(v, `\u`)
		if i < 0 {
			b.WriteString(v)
			return b.String(), nil
		}
		b.WriteString(v[:i])
		v = v[i+2:]
		var hex string
		if strings.HasPrefix(v, "{") {
			end := strings.IndexByte(v, '}')
			if end < 0 {
				return "", fmt.Errorf("unterminated \\u{")
			}
			hex, v = v[1:end], v[end+1:]
		} else {
			if len(v) < 4 {
				return "", fmt.Errorf("short \\u")
			}
			hex, v = v[:4], v[4:]
		}
		n, err := strconv.ParseUint(hex, 16, 32)
		if err != nil {
			return "", err
		}
		if n >= 0xdc80 && n <= 0xdcff {
			b.WriteByte(byte(n - 0xdc00))
			continue
		}
		b.WriteRune(rune(n))
	}
}

// TestVisibleJSON: JSON text of every case of testdata/visible.json (and
// of a character past U+FFFF) shows no hidden character and is the same
// JSON value.
func TestVisibleJSON(t *testing.T) {
	cases := append(MustVisibleCases(t), visibleCase{Name: "tag character", In: "a\U000E0041b"}, visibleCase{Name: "DEL and C1", In: "\x7f\u0085\u009b"})
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			in := map[string]any{"message": tc.In, "list": []any{tc.In, 1}}
			b, err := json.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			got := VisibleJSON(b)
			if i := strings.IndexFunc(string(got), Hidden); i >= 0 {
				t.Fatalf("VisibleJSON(%s) = %s shows %q raw", b, got, []rune(string(got[i:]))[0])
			}
			var back map[string]any
			if err := json.Unmarshal(got, &back); err != nil || fmt.Sprint(back) != fmt.Sprint(in) {
				t.Fatalf("VisibleJSON(%s) = %s is not the same value (%v): %v", b, got, err, back)
			}
		})
	}
	if b := []byte(`{"a":"plain é"}`); &VisibleJSON(b)[0] != &b[0] {
		t.Fatal("a JSON text with nothing hidden is copied")
	}
}

// TestVisibleJSONLine: a JSON text shown on one line keeps no newline or
// tab and no hidden character, and is the same value; a cut one too.
func TestVisibleJSONLine(t *testing.T) {
	in := "{\n\t\"a\": \"x\x1b[2J\u202e\u2028y\\n\",\n\t\"b\": [1,\t2]\n}"
	got := VisibleJSONLine([]byte(in))
	if strings.ContainsAny(got, "\n\t") || strings.IndexFunc(got, Hidden) >= 0 {
		t.Fatalf("VisibleJSONLine(%q) = %q", in, got)
	}
	var back, want any
	if err := json.Unmarshal([]byte(got), &back); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(strings.NewReplacer("\x1b", `\u001b`, "\u202e", `\u202e`, "\u2028", `\u2028`).Replace(in)), &want); err != nil || fmt.Sprint(back) != fmt.Sprint(want) {
		t.Fatalf("VisibleJSONLine(%q) = %q is not the same value (%v)", in, got, err)
	}
	if cut := VisibleJSONLine([]byte(in[:20])); strings.ContainsAny(cut, "\n\t\x1b\u202e") {
		t.Fatalf("a cut text: %q", cut)
	}
}

// TestMarkedLines: each line numbered, the stopping line marked, hidden
// characters escaped.
func TestMarkedLines(t *testing.T) {
	got := MarkedLines("a = 1\nb = \"\x1b[2J\u2028\"\nc\n", 2)
	want := "  1  a = 1\n> 2  b = \"\\u001b[2J\\u2028\"\n  3  c"
	if got != want {
		t.Fatalf("MarkedLines = %q, want %q", got, want)
	}
}
