package replay

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/procgraph/procgraph/internal/text"
)

func TestFuncDispatchers(t *testing.T) {
	ctx := context.Background()
	d := NewFuncDispatcher(map[string]ToolFunc{"b": func(context.Context, map[string]any) (any, error) { return 1, nil }, "a": nil})
	if !slices.Equal(d.Names(), []string{"a", "b"}) {
		t.Fatal(d.Names())
	}
	if v, err := d.Dispatch(ctx, "b", nil); v != 1 || err != nil {
		t.Fatal(v, err)
	}
	if _, err := d.Dispatch(ctx, "c", nil); err == nil || !strings.Contains(err.Error(), `"c"`) {
		t.Fatal(err)
	}
	f := DispatcherFunc(func(_ context.Context, tool string, _ map[string]any) (any, error) { return tool, nil })
	if v, _ := f.Dispatch(ctx, "x", nil); v != "x" {
		t.Fatal(v)
	}
}

func TestPlainNumbers(t *testing.T) {
	in := map[string]any{"i": json.Number("9007199254740993"), "f": json.Number("1.5"), "e": json.Number("1e3"),
		"l": []any{json.Number("2"), map[string]any{"n": json.Number("-3")}}, "s": "1"}
	want := map[string]any{"i": int64(9007199254740993), "f": 1.5, "e": 1000.0, "l": []any{int64(2), map[string]any{"n": int64(-3)}}, "s": "1"}
	if got := plainNumbers(in); !reflect.DeepEqual(got, want) {
		t.Fatalf("plainNumbers = %#v", got)
	}
}

func TestBounded(t *testing.T) {
	s := strings.Repeat("é", 100)
	got := text.Bounded(s, 51)
	if !utf8.ValidString(got) || len(got) > 51+len("…") || !strings.HasSuffix(got, "…") {
		t.Fatalf("bounded = %q", got)
	}
	if text.Bounded("short", 10) != "short" {
		t.Fatal("cut a short string")
	}
}
