package mcpdispatch

import (
	"context"
	"fmt"
	"testing"

	"github.com/procgraph/procgraph/procedures"
)

// TestOverall: ok when every server is ok (or there is none; unknown
// counts as ok), down when every one is down, degraded otherwise.
func TestOverall(t *testing.T) {
	st := func(states ...string) []ServerState {
		out := make([]ServerState, len(states))
		for i, s := range states {
			out[i] = ServerState{Server: fmt.Sprint(i), State: s}
		}
		return out
	}
	for _, c := range []struct {
		states []ServerState
		want   string
	}{
		{st(), StateOK},
		{st(StateOK, StateUnknown), StateOK},
		{st(StateOK, StateDown), StateDegraded},
		{st(StateOK, StateDegraded), StateDegraded},
		{st(StateDown), StateDown},
		{st(StateDown, StateDown), StateDown},
		{st(StateDown, StateDegraded), StateDegraded},
	} {
		if got := Overall(c.states); got != c.want {
			t.Errorf("Overall(%v) = %s, want %s", c.states, got, c.want)
		}
	}
}

// TestStatusCountsOncePerRevision: the catalogue's tools are counted per
// server by the first Status of a revision only — a later Status of that
// revision does not walk the tools (here: taken away behind its back), so
// its cost does not grow with the catalogue — and a new revision is
// counted again.
func TestStatusCountsOncePerRevision(t *testing.T) {
	g := NewGateway(map[string]Caller{"a": nil, "b": nil}, nil)
	tools := make([]procedures.Tool, 100_000)
	for i := range tools {
		tools[i] = procedures.Tool{Name: fmt.Sprintf("t%06d", i), Server: []string{"a", "b"}[i%2]}
	}
	cat := procedures.StoredCatalogue(tools, "r1")
	g.Route(func(context.Context) (*procedures.Catalogue, error) { return cat, nil })
	counts := func() [2]int {
		t.Helper()
		st, err := g.Status(context.Background())
		if err != nil || len(st) != 2 || st[0].State != StateUnknown {
			t.Fatalf("Status: %+v %v", st, err)
		}
		return [2]int{st[0].ToolsInCatalogue, st[1].ToolsInCatalogue}
	}
	if got := counts(); got != [2]int{50_000, 50_000} {
		t.Fatalf("counts %v", got)
	}
	cat.Tools = nil
	if got := counts(); got != [2]int{50_000, 50_000} {
		t.Fatalf("the tools of a revision already counted were walked again: %v", got)
	}
	next := procedures.StoredCatalogue(tools[:10], "r2")
	g.Route(func(context.Context) (*procedures.Catalogue, error) { return next, nil })
	if got := counts(); got != [2]int{5, 5} {
		t.Fatalf("a new revision is not counted: %v", got)
	}
}

// TestNoteCallKeepsTheLastFailure: the last failed call's class is the
// server's; a success does not erase it; an unknown server is ignored.
func TestNoteCallKeepsTheLastFailure(t *testing.T) {
	g := NewGateway(map[string]Caller{"a": nil}, nil)
	g.NoteCall("a", "timeout")
	g.NoteCall("a", "tool_error")
	g.NoteCall("a", "")
	g.NoteCall("zz", "timeout")
	st, err := g.Status(context.Background())
	if err != nil || len(st) != 1 || st[0].LastErrorClass == nil || *st[0].LastErrorClass != "tool_error" || st[0].LastErrorAt == nil {
		t.Fatalf("Status: %+v %v", st, err)
	}
}
