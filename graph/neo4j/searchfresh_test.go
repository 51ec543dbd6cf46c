package neo4j

import (
	"context"
	"fmt"
	"testing"

	"github.com/procgraph/procgraph/cypher"
	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
)

// mustSearch returns the names Find with q = word gives on s.
func mustSearch(tb testing.TB, s *Store, word string) []string {
	tb.Helper()
	ps, _, err := s.Find(context.Background(), procedures.Query{Search: []string{word}})
	if err != nil {
		tb.Fatalf("Find(q=%s): %v", word, err)
	}
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	return names
}

// TestSearchSeesOwnWritesAtOnce: the index is eventually consistent, yet a
// search right after this store's capture finds it — a new procedure, and
// an existing one whose capture added a search part (a new cause).
func TestSearchSeesOwnWritesAtOnce(t *testing.T) {
	s := freshStore(t)
	for i := range 15 {
		word := fmt.Sprintf("zebrafresh%d", i)
		in := storetest.In([]string{fmt.Sprintf("tool_fresh_%d", i)}, "h", "k", storetest.At(i))
		in.Version.Summary = "checks " + word
		storetest.MustCapture(t, s, in)
		if got := mustSearch(t, s, word); len(got) != 1 || got[0] != in.Name {
			t.Fatalf("capture %d: search %s right after it gave %v, want [%s]", i, word, got, in.Name)
		}
		again := in
		again.UsageKey = "k2"
		again.Cause = &procedures.CauseInput{Name: fmt.Sprintf("okapifresh%d", i)}
		storetest.MustCapture(t, s, again)
		if got := mustSearch(t, s, again.Cause.Name); len(got) != 1 || got[0] != in.Name {
			t.Fatalf("capture %d with a new cause: search %s right after it gave %v, want [%s]", i, again.Cause.Name, got, in.Name)
		}
	}
}

// TestCaptureMarksSearchWrites: only a capture that changes a search text
// makes the next search wait for the index.
func TestCaptureMarksSearchWrites(t *testing.T) {
	s := freshStore(t)
	in := storetest.In([]string{"tool_marked"}, "h", "k", storetest.At(1))
	for i, c := range []struct {
		name string
		in   func() procedures.CaptureInput
		want uint64
	}{
		{"new procedure", func() procedures.CaptureInput { return in }, 1},
		{"same text again", func() procedures.CaptureInput { x := in; x.UsageKey = "k2"; return x }, 0},
		{"a new version, same text", func() procedures.CaptureInput {
			x := in
			x.Version.CodeHash, x.Version.Code = "h2", in.Version.Code+"\n"
			return x
		}, 0},
		{"a new cause", func() procedures.CaptureInput {
			x := in
			x.Cause = &procedures.CauseInput{Name: "new_cause"}
			return x
		}, 1},
	} {
		before := s.searchFresh.written.Load()
		storetest.MustCapture(t, s, c.in())
		if got := s.searchFresh.written.Load() - before; got != c.want {
			t.Errorf("%d %s: %d search writes noted, want %d", i, c.name, got, c.want)
		}
	}
}

// TestSearchIndexMigrates: a database whose procedure_search index is the
// old strongly consistent one gets the eventually consistent one at Open,
// and keeps searching what it held.
func TestSearchIndexMigrates(t *testing.T) {
	ctx := context.Background()
	s := freshStore(t)
	in := storetest.In([]string{"tool_migrated"}, "h", "k", storetest.At(1))
	in.Version.Summary = "walrusmigrated"
	storetest.MustCapture(t, s, in)
	eventual := func() bool {
		t.Helper()
		recs := run(t, s, cypher.Query("search_index_options"), nil)
		if len(recs) != 1 {
			t.Fatalf("search index options: %d rows", len(recs))
		}
		return field(recs[0], "eventuallyConsistent") == true
	}
	if !eventual() {
		t.Fatal("a fresh store's search index is not eventually consistent")
	}
	run(t, s, cypher.Query("search_index_drop"), nil)
	run(t, s, testdata(t, "search_index_strong"), nil)
	run(t, s, "CALL db.awaitIndexes(300)", nil)
	if eventual() {
		t.Fatal("the old index reads as eventually consistent")
	}
	reopened, err := Open(ctx, settings(t))
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	if !eventual() {
		t.Fatal("Open left the strongly consistent search index")
	}
	if got := mustSearch(t, reopened, "walrusmigrated"); len(got) != 1 || got[0] != in.Name {
		t.Fatalf("after the migration: %v, want [%s]", got, in.Name)
	}
}
