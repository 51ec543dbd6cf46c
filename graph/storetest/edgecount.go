package storetest

import (
	"testing"

	"github.com/procgraph/procgraph/graphview"
)

// testEdgeCounts: CountEdges counts one CALLS edge a signature entry of
// every procedure and one INVESTIGATED_BY edge a procedure's cause, a
// capture's second use of a cause adding none.
func testEdgeCounts(t *testing.T, newStore NewStore) {
	s := newStore(t)
	ec, ok := s.(graphview.EdgeCounter)
	if !ok {
		t.Skip("the store counts no edges")
	}
	count := func() (int, int) {
		t.Helper()
		calls, inv, err := ec.CountEdges(ctx)
		if err != nil {
			t.Fatalf("CountEdges: %v", err)
		}
		return calls, inv
	}
	if c, i := count(); c != 0 || i != 0 {
		t.Fatalf("an empty store counts %d, %d", c, i)
	}
	MustCapture(t, s, WithCause(In([]string{"tool_a", "tool_b"}, "h1", "k1", At(0)), "c1", ""))
	MustCapture(t, s, WithCause(In([]string{"tool_a", "tool_b"}, "h1", "k2", At(1)), "c1", ""))
	MustCapture(t, s, WithCause(In([]string{"tool_a", "tool_b"}, "h1", "k3", At(2)), "c2", ""))
	MustCapture(t, s, WithCause(In([]string{"tool_a", "tool_c", "tool_d"}, "h2", "k4", At(3)), "c1", ""))
	MustCapture(t, s, In([]string{"tool_c", "tool_d"}, "h3", "k5", At(4)))
	want := map[string]int{}
	var calls, inv int
	for _, sig := range [][]string{{"tool_a", "tool_b"}, {"tool_a", "tool_c", "tool_d"}, {"tool_c", "tool_d"}} {
		p := MustGet(t, s, NameOf(sig...))
		calls += len(p.Signature)
		inv += len(p.Causes)
		want[p.Name] = len(p.Causes)
	}
	if calls != 7 || inv != 3 {
		t.Fatalf("the fixture holds %d signature entries and %d cause links (%v)", calls, inv, want)
	}
	if c, i := count(); c != calls || i != inv {
		t.Fatalf("CountEdges = %d CALLS, %d INVESTIGATED_BY; want %d, %d", c, i, calls, inv)
	}
}
