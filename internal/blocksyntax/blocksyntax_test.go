package blocksyntax

import (
	"testing"

	"go.starlark.net/starlark"
)

func TestParseWrapsStatementsInAFunction(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{
		{"return at top level", "x = a + 1\nreturn x * 2\n", "22"},
		{"no return", "x = a\n", "None"},
		{"empty block", "", "None"},
		{"multi-line string keeps its text", "s = \"\"\"one\n  two\"\"\"\nreturn s\n", "\"one\\n  two\""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse("t.star", tc.src)
			if err != nil {
				t.Fatal(err)
			}
			predeclared := starlark.StringDict{"a": starlark.MakeInt(10)}
			prog, err := starlark.FileProgram(f, predeclared.Has)
			if err != nil {
				t.Fatal(err)
			}
			thread := &starlark.Thread{Name: "test"}
			globals, err := prog.Init(thread, predeclared)
			if err != nil {
				t.Fatal(err)
			}
			v, err := starlark.Call(thread, globals[FuncName], nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := v.String(); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestParseKeepsPositions(t *testing.T) {
	f, err := Parse("t.star", "x = 1\ny = undefined_name\nreturn y\n")
	if err != nil {
		t.Fatal(err)
	}
	_, err = starlark.FileProgram(f, func(string) bool { return false })
	if err == nil {
		t.Fatal("want an undefined-name error")
	}
	if got := err.Error(); got != "t.star:2:5: undefined: undefined_name" {
		t.Fatalf("got %q", got)
	}
}
