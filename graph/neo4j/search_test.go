package neo4j

import (
	"context"
	"testing"

	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
)

// TestSearchSeesAnotherInstancesCatalogue: a search's tool terms come from
// the catalogue the store last read, and search.cypher reports the stored
// revision: a catalogue another instance put since is read and used at
// once.
func TestSearchSeesAnotherInstancesCatalogue(t *testing.T) {
	ctx := context.Background()
	s := freshStore(t)
	other := openStore(t)
	in := storetest.In([]string{"delta_probe", "gamma_reader"}, "h1", "k1", storetest.At(1))
	storetest.MustCapture(t, s, in)
	find := func() []*procedures.Procedure {
		t.Helper()
		ps, _, err := s.Find(ctx, procedures.Query{Search: []string{"stdout"}})
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}
	if got := find(); len(got) != 0 {
		t.Fatalf("stdout matched before any catalogue: %v", got)
	}
	if _, err := s.Catalogue(ctx); err != nil { // this instance now holds the empty catalogue
		t.Fatal(err)
	}
	c, err := procedures.NewCatalogue([]procedures.Tool{
		{Name: "gamma_reader", Description: "Reads the stdout of a payload"}, {Name: "delta_probe"}, {Name: "x"}, {Name: "y"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.PutCatalogue(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got := find(); len(got) != 1 || got[0].Name != in.Name {
		t.Fatalf("after another instance's catalogue: %v, want %s", got, in.Name)
	}
}
