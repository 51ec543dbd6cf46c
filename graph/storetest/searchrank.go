package storetest

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/search"
)

// testSearchRanking: on equal text, a search is in search.Compare's order
// (frequency, then last_used_at, never used last, then name) with the
// scores of search.Score, pages
// of it are slices of the whole with the same total, past the end a page
// is empty, and a summary filter sees a class created after the store
// last read its classes.
func testSearchRanking(t *testing.T, newStore NewStore) {
	s := newStore(t)
	type spec struct {
		id       string
		freq     int
		lastUsed int
	}
	specs := []spec{{"e", 2, 0}, {"d", 2, 0}, {"g", 2, 10}, {"f", 1, 30}, {"c", 2, 10}, {"b", 2, 20}, {"a", 3, 0}} // not in order
	sig := func(id string) []string { return []string{"x" + id + "_t", "y" + id + "_t"} }
	for _, sp := range specs {
		for k := 0; k < sp.freq; k++ {
			in := In(sig(sp.id), "h"+sp.id, fmt.Sprintf("k%d", k), At(1))
			in.Version.Summary = "same words"
			MustCapture(t, s, in)
		}
		if sp.lastUsed != 0 { // a replay under a counted key: last used moves, frequency does not
			MustRecordUse(t, s, use(NameOf(sig(sp.id)...), "", "k0", true, At(sp.lastUsed)))
		}
	}
	var want []string
	for _, id := range []string{"a", "b", "c", "g", "d", "e", "f"} {
		want = append(want, NameOf(sig(id)...))
	}
	all, total := searchFind(t, s, "same words", nil)
	requireEqual(t, "order", names(all), want)
	if total != len(want) {
		t.Fatalf("total %d, want %d", total, len(want))
	}
	for i, p := range all {
		if p.Score == nil || *p.Score <= 0 || i > 0 && *p.Score > *all[i-1].Score {
			t.Fatalf("scores not set and descending at %s: %v", p.Name, p.Score)
		}
	}
	// The page is in search.Compare's order of the scores it answers, and
	// each score is search.Score of the one text relevance these equal
	// texts have (taken from the procedure used once): a store's ranking
	// in its query language (search.cypher) is search's (docs/adr/0016).
	hits := make([]search.Hit, len(all))
	for i, p := range all {
		hits[i] = search.Hit{Name: p.Name, Score: *p.Score, Frequency: p.Frequency}
		if p.LastUsedAt != nil {
			ms := p.LastUsedAt.UnixMilli()
			hits[i].LastUsedAt = &ms
		}
	}
	if !slices.IsSortedFunc(hits, search.Compare) {
		t.Fatalf("page not in search.Compare order: %+v", hits)
	}
	once := hits[len(hits)-1] // f, used once
	text := once.Score / (1 + search.FrequencyWeight*math.Log1p(1))
	for _, h := range hits {
		if want := search.Score(text, h.Frequency); math.Abs(h.Score-want) > 2e-6 {
			t.Fatalf("%s (frequency %d): score %v, want search.Score = %v", h.Name, h.Frequency, h.Score, want)
		}
	}
	var paged []string
	for off := 0; off < len(want)+2; off += 2 {
		page, total := searchFind(t, s, "same words", func(q *procedures.Query) { q.Offset, q.Limit = off, 2 })
		if total != len(want) {
			t.Fatalf("offset %d: total %d, want %d", off, total, len(want))
		}
		paged = append(paged, names(page)...)
	}
	requireEqual(t, "pages of 2", paged, want)
	for _, off := range []int{search.MaxHits, 1 << 40} {
		page, total := searchFind(t, s, "same words", func(q *procedures.Query) { q.Offset, q.Limit = off, 25 })
		if len(page) != 0 || total != len(want) {
			t.Fatalf("offset %d: %v, total %d", off, names(page), total)
		}
	}

	succeeded := func(q *procedures.Query) { q.Status = procedures.StatusSucceeded }
	got, _ := searchFind(t, s, "same words", succeeded)
	requireEqual(t, "status filter", names(got), want)
	// A procedure of a class no procedure had (three tools), created after
	// the filtered search above read the classes.
	in := In([]string{"p_t", "q_t", "r_t"}, "hn", "kn", At(2))
	in.Version.Summary = "same words and more words"
	MustCapture(t, s, in)
	got, total = searchFind(t, s, "same words", succeeded)
	if total != len(want)+1 || !slices.Contains(names(got), in.Name) {
		t.Fatalf("a new class under a summary filter: %v (total %d), want %s too", names(got), total, in.Name)
	}
	got, _ = searchFind(t, s, "same words", func(q *procedures.Query) { q.MinTools = 3 })
	requireEqual(t, "min tools 3", names(got), []string{in.Name})
}
