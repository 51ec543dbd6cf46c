package embedded

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/fault"
	st "github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/search"
)

func TestContiguous(t *testing.T) {
	cases := []struct {
		name     string
		gen      uint64
		ranges   []genRange
		want     uint64
		wantRest []genRange
	}{
		{"nothing", 4, nil, 4, nil},
		{"next range", 4, []genRange{{4, 6}}, 6, nil},
		{"late range holds back", 0, []genRange{{1, 2}}, 0, []genRange{{1, 2}}},
		{"gap filled out of order", 0, []genRange{{2, 5}, {0, 1}, {1, 2}}, 5, nil},
		{"gap after a run", 3, []genRange{{3, 4}, {6, 9}, {4, 5}}, 5, []genRange{{6, 9}}},
		{"already held", 7, []genRange{{2, 3}, {7, 8}}, 8, nil},
		{"ranges above a gap joined", 1, []genRange{{5, 6}, {2, 4}, {4, 5}, {7, 9}}, 1, []genRange{{2, 6}, {7, 9}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, rest := contiguous(c.gen, c.ranges)
			if got != c.want || !slices.Equal(rest, c.wantRest) {
				t.Errorf("contiguous(%d, %v) = %d, %v; want %d, %v", c.gen, c.ranges, got, rest, c.want, c.wantRest)
			}
		})
	}
}

// putParts writes name's search parts as a write transaction does and
// returns what it would hand to the indexer.
func putParts(t *testing.T, s *Store, name string, parts ...string) *searchDocs {
	t.Helper()
	d := &searchDocs{}
	if err := s.db.Update(func(tx *bolt.Tx) error { return putSearchParts(tx, name, parts, d) }); err != nil {
		t.Fatal(err)
	}
	return d
}

// recordedGen is the generation the search index of s records.
func recordedGen(t *testing.T, idx bleve.Index) uint64 {
	t.Helper()
	v, err := idx.GetInternal([]byte(searchGenKey))
	if err != nil {
		t.Fatal(err)
	}
	if v == nil {
		return 0
	}
	g, err := strconv.ParseUint(string(v), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// indexHolds reports whether the index has a document with word.
func indexHolds(t *testing.T, idx bleve.Index, word string) bool {
	t.Helper()
	q := bleve.NewTermQuery(word)
	q.SetField(searchField)
	res, err := idx.Search(bleve.NewSearchRequest(q))
	if err != nil {
		t.Fatal(err)
	}
	return res.Total > 0
}

// TestLateEnqueueHoldsTheGenerationBack: two transactions commit
// generations 1 and 2, and only the second reaches the indexer (the first
// is late, or its process died before handing it over). The index holds
// the second document but records generation 0, so a reopen rebuilds it
// and finds the first; once the first arrives the index records 2.
func TestLateEnqueueHoldsTheGenerationBack(t *testing.T) {
	for _, arrives := range []bool{true, false} {
		t.Run(fmt.Sprintf("early_arrives=%v", arrives), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "p.db")
			s := mustOpen(t, path)
			early := putParts(t, s, "proc_early", "earlyword")
			late := putParts(t, s, "proc_late", "lateword")
			if early.from != 0 || early.to != 1 || late.from != 1 || late.to != 2 {
				t.Fatalf("ranges (%d, %d] and (%d, %d], want (0, 1] and (1, 2]", early.from, early.to, late.from, late.to)
			}
			s.indexDocs(late)
			if err := s.search.wait(ctx); err != nil {
				t.Fatal(err)
			}
			if !indexHolds(t, s.search.idx, "lateword") {
				t.Fatal("the late document is not indexed")
			}
			if g := recordedGen(t, s.search.idx); g != 0 {
				t.Fatalf("index records generation %d while generation 1 is not indexed", g)
			}
			if arrives {
				s.indexDocs(early)
				if err := s.search.wait(ctx); err != nil {
					t.Fatal(err)
				}
				if g := recordedGen(t, s.search.idx); g != 2 {
					t.Fatalf("index records generation %d after both, want 2", g)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = mustOpen(t, path)
			for _, w := range []string{"earlyword", "lateword"} {
				if !indexHolds(t, s.search.idx, w) {
					t.Errorf("after reopen the index misses %s", w)
				}
			}
			if g := recordedGen(t, s.search.idx); g != 2 {
				t.Errorf("after reopen the index records generation %d, want 2", g)
			}
		})
	}
}

// TestConcurrentCapturesAreSearchable: 16 clients capture at once, half on
// one procedure and half on procedures of their own, each capture with a
// word of its own; each client's search right after its capture finds it,
// and afterwards every word finds its procedure (the newest document of the
// shared one holds them all).
func TestConcurrentCapturesAreSearchable(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "p.db"))
	const clients, each = 16, 4
	sigOf := func(c int) []string {
		if c%2 == 0 {
			return []string{"shared_tool", "other_tool"}
		}
		return []string{fmt.Sprintf("solo%02d_tool", c), "other_tool"}
	}
	word := func(c, j int) string { return fmt.Sprintf("w%dx%d", c, j) }
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for j := range each {
				in := st.In(sigOf(c), fmt.Sprintf("h%d", j), fmt.Sprintf("k%d-%d", c, j), st.At(c*each+j))
				in.Version.Summary = word(c, j)
				if _, err := s.Capture(ctx, in); err != nil {
					t.Error(err)
					return
				}
				if got := searchOf(t, s, word(c, j)); !slices.Equal(got, []string{in.Name}) {
					t.Errorf("right after its capture %s finds %v, want %s", word(c, j), got, in.Name)
				}
			}
		})
	}
	wg.Wait()
	for c := range clients {
		for j := range each {
			if got, want := searchOf(t, s, word(c, j)), st.NameOf(sigOf(c)...); !slices.Equal(got, []string{want}) {
				t.Errorf("%s finds %v, want %s", word(c, j), got, want)
			}
		}
	}
}

// searchOf is the names q finds in s; safe in any goroutine.
func searchOf(t *testing.T, s *Store, q string) []string {
	terms, err := search.Terms(q)
	if err != nil {
		t.Error(err)
		return nil
	}
	ps, _, err := s.Find(ctx, procedures.Query{Search: terms})
	if err != nil {
		t.Error(err)
		return nil
	}
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

// TestCloseIndexesWhatIsPending: Close right after a burst of captures
// stops the indexer only once every capture is in the index, with the
// file's generation recorded (the next Open has nothing to rebuild).
func TestCloseIndexesWhatIsPending(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := g; i < n; i += 8 {
				if _, err := s.Capture(ctx, st.In([]string{fmt.Sprintf("burst%03d_tool", i)}, "h", "k", st.At(i))); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	si := s.search
	// Hold the indexer inside its next round, queue more documents behind
	// it, and close while it holds them: Close must index them too.
	held, release := make(chan struct{}), make(chan struct{})
	si.mu.Lock()
	si.beforeApply = func() {
		si.beforeApply = nil
		close(held)
		<-release
	}
	si.mu.Unlock()
	st.MustCapture(t, s, st.In([]string{"held_tool"}, "h", "k", st.At(n)))
	<-held
	for i := range 5 {
		st.MustCapture(t, s, st.In([]string{fmt.Sprintf("behind%d_tool", i)}, "h", "k", st.At(n+1+i)))
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	for closing := false; !closing; {
		si.mu.Lock()
		closing = si.closing
		si.mu.Unlock()
		time.Sleep(time.Millisecond)
	}
	close(release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	select {
	case <-si.stopped:
	default:
		t.Fatal("the indexer goroutine outlives Close")
	}
	var gen uint64
	view(t, path, func(tx *bolt.Tx) error { gen = getU64(tx.Bucket(bMeta).Get(metaSearchGen)); return nil })
	idx, err := bleve.Open(path + ".search")
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if count, err := idx.DocCount(); err != nil || count != n+6 {
		t.Errorf("after Close the index holds %d documents (%v), want %d", count, err, n+6)
	}
	if g := recordedGen(t, idx); g != gen || gen < n {
		t.Errorf("after Close the index records generation %d, the file %d (want equal, ≥ %d)", g, gen, n)
	}
}

// TestIndexerFailureFailsSearches: when the indexer cannot index (here a
// document whose stored parts are corrupt), searches fail with
// CodeUnavailable instead of waiting forever, Close returns, and the next
// Open rebuilds the index.
func TestIndexerFailureFailsSearches(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	s := mustOpen(t, path)
	in := st.In([]string{"fine_tool"}, "h", "k", st.At(0))
	st.MustCapture(t, s, in)
	var d searchDocs
	err := s.db.Update(func(tx *bolt.Tx) error {
		if err := putSearchParts(tx, "proc_broken", []string{"x"}, &d); err != nil {
			return err
		}
		return tx.Bucket(bSearch).Put([]byte("proc_broken"), []byte("{not json"))
	})
	if err != nil {
		t.Fatal(err)
	}
	s.indexDocs(&d)
	done := make(chan error, 1)
	go func() {
		_, _, err := s.Find(context.Background(), procedures.Query{Search: []string{"fine"}})
		done <- err
	}()
	select {
	case err := <-done:
		var pe *fault.Error
		if !errors.As(err, &pe) || pe.Code != fault.CodeUnavailable {
			t.Fatalf("search after a failed update: %v, want CodeUnavailable", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("search after a failed update still waits")
	}
	if _, failed := s.SearchIndexState(); !failed {
		t.Error("SearchIndexState does not report the failed update")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Mend the record; the index is behind the file and is rebuilt.
	update(t, path, func(tx *bolt.Tx) error { return tx.Bucket(bSearch).Put([]byte("proc_broken"), []byte(`["mended"]`)) })
	s = mustOpen(t, path)
	if got := st.MustSearchNames(t, s, "fine"); !slices.Equal(got, []string{in.Name}) {
		t.Errorf("after reopen fine finds %v", got)
	}
	if !indexHolds(t, s.search.idx, "mended") {
		t.Error("the index was not rebuilt at reopen")
	}
}

// TestLargeRoundIsIndexed: a round larger than one bleve batch (a batch
// capture of 4500 new procedures, as an import's) is indexed whole, with
// the file's generation recorded.
func TestLargeRoundIsIndexed(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "p.db"))
	const n = 2*indexBatchSize + 500
	ins := make([]procedures.CaptureInput, n)
	for i := range ins {
		ins[i] = st.In([]string{fmt.Sprintf("large%04d_tool", i)}, "h", "k", st.At(i))
	}
	if err := s.CaptureBatch(ctx, ins); err != nil {
		t.Fatal(err)
	}
	if err := s.search.wait(ctx); err != nil {
		t.Fatal(err)
	}
	if count, err := s.search.idx.DocCount(); err != nil || count != n {
		t.Errorf("the index holds %d documents (%v), want %d", count, err, n)
	}
	if g := recordedGen(t, s.search.idx); g != n {
		t.Errorf("the index records generation %d, want %d", g, n)
	}
	for _, i := range []int{0, indexBatchSize, n - 1} {
		if got := st.MustSearchNames(t, s, fmt.Sprintf("large%04d", i)); !slices.Equal(got, []string{ins[i].Name}) {
			t.Errorf("large%04d finds %v", i, got)
		}
	}
}

// TestWaitersEndTheLinger: with a linger that would outlast the test, a
// search right after a capture still finds it (the waiting search ends
// the linger), and Close right after another capture returns with it
// indexed.
func TestWaitersEndTheLinger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	lingering := make(chan struct{}, 2)
	s.search.mu.Lock()
	s.search.lingerFor = time.Hour
	s.search.beforeLinger = func() { lingering <- struct{}{} }
	s.search.mu.Unlock()
	in := st.In([]string{"linger_tool", "other_tool"}, "h", "k", st.At(0))
	in.Version.Summary = "lingerword"
	st.MustCapture(t, s, in)
	<-lingering
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	terms, _ := search.Terms("lingerword")
	ps, _, err := s.Find(tctx, procedures.Query{Search: terms})
	if err != nil || len(ps) != 1 || ps[0].Name != in.Name {
		t.Fatalf("a search right after a capture, the indexer lingering: %v, %v", ps, err)
	}
	st.MustCapture(t, s, st.In([]string{"linger2_tool", "other_tool"}, "h", "k", st.At(1)))
	<-lingering
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close waited out the linger")
	}
	idx, err := bleve.Open(path + ".search")
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if count, err := idx.DocCount(); err != nil || count != 2 {
		t.Errorf("after Close the index holds %d documents (%v), want 2", count, err)
	}
}
