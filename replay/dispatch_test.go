package replay_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/procgraph/procgraph/replay"

	"github.com/procgraph/procgraph/internal/text"
)

func TestFuncDispatchers(t *testing.T) {
	ctx := context.Background()
	d := replay.NewFuncDispatcher(map[string]replay.ToolFunc{"b": func(context.Context, map[string]any) (any, error) { return 1, nil }, "a": nil})
	if !slices.Equal(d.Names(), []string{"a", "b"}) {
		t.Fatal(d.Names())
	}
	if v, err := d.Dispatch(ctx, "b", nil); v != 1 || err != nil {
		t.Fatal(v, err)
	}
	if _, err := d.Dispatch(ctx, "c", nil); err == nil || !strings.Contains(err.Error(), `"c"`) {
		t.Fatal(err)
	}
	f := replay.DispatcherFunc(func(_ context.Context, tool string, _ map[string]any) (any, error) { return tool, nil })
	if v, _ := f.Dispatch(ctx, "x", nil); v != "x" {
		t.Fatal(v)
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
