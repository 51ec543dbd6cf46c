package embedded

import (
	"path/filepath"
	"testing"

	"github.com/procgraph/procgraph/procedures"
)

// TestCatalogueMemoIsTheStores opens two stores in one process with
// different catalogues and reads them interleaved: each reads its own, and
// each store's memo keeps its catalogue across the other's reads (a memo
// shared by the process would hold only the last one read).
func TestCatalogueMemoIsTheStores(t *testing.T) {
	dir := t.TempDir()
	a, b := mustOpen(t, filepath.Join(dir, "a.db")), mustOpen(t, filepath.Join(dir, "b.db"))
	put := func(s *Store, tools ...procedures.Tool) *procedures.Catalogue {
		t.Helper()
		c, err := procedures.NewCatalogue(tools)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.PutCatalogue(ctx, c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	wantA := put(a, procedures.Tool{Name: "tool_a", ReadOnly: true})
	wantB := put(b, procedures.Tool{Name: "tool_b"}, procedures.Tool{Name: "tool_c", ReadOnly: true})
	read := func(s *Store, want *procedures.Catalogue) *procedures.Catalogue {
		t.Helper()
		c, err := s.Catalogue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c.Revision != want.Revision || len(c.Tools) != len(want.Tools) || c.Tools[0].Name != want.Tools[0].Name {
			t.Fatalf("catalogue %s (%d tools, first %s), want %s (%d tools, first %s)",
				c.Revision, len(c.Tools), c.Tools[0].Name, want.Revision, len(want.Tools), want.Tools[0].Name)
		}
		return c
	}
	a1 := read(a, wantA)
	b1 := read(b, wantB)
	a2 := read(a, wantA)
	b2 := read(b, wantB)
	if a1 != a2 || b1 != b2 {
		t.Errorf("a catalogue read twice from one store, with the other store's read between, was decoded again (a: %p, %p; b: %p, %p)", a1, a2, b1, b2)
	}
	if a2 := read(a, wantA); a2 != a1 {
		t.Errorf("a catalogue read twice from one store was decoded again (%p, %p)", a1, a2)
	}
}
