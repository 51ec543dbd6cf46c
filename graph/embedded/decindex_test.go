package embedded

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/audit"
	st "github.com/procgraph/procgraph/graph/storetest"
)

// heldIndexer opens a store whose decision indexer waits an hour after
// each wake-up: what is appended stays in bUnindexed until indexPending
// or Close.
func heldIndexer(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path, Options{NoSync: true, indexDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// unindexed is how many records bUnindexed holds.
func unindexed(t *testing.T, s *Store) int {
	t.Helper()
	n := 0
	if err := s.db.View(func(tx *bolt.Tx) error { n = tx.Bucket(bUnindexed).Stats().KeyN; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// appendMixed appends n records of two kinds, two outcomes, three actors
// and two procedures, one millisecond apart from at, and returns them.
func appendMixed(t *testing.T, s *Store, n int, at time.Time) []audit.Decision {
	t.Helper()
	var out []audit.Decision
	for i := range n {
		kind := audit.KindTurn
		if i%2 == 1 {
			kind = audit.KindInvoke
		}
		d := st.Decision(kind, fmt.Sprintf("proc__p%d", i%2), "h", at.Add(time.Duration(i)*time.Millisecond))
		d.Actor = fmt.Sprintf("actor-%d", i%3)
		if i%5 == 0 {
			d.Outcome = audit.Denied
		}
		if err := s.AppendDecision(ctx, d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// expected is what f lists of all, newest first, f's limit applied.
func expected(all []audit.Decision, f audit.DecisionFilter) []string {
	var ids []string
	for _, d := range slices.Backward(all) {
		if f.Match(d) && (f.Since.IsZero() || !d.At.Before(f.Since)) && (f.Until.IsZero() || d.At.Before(f.Until)) {
			ids = append(ids, d.ID)
		}
	}
	if f.Limit > 0 && len(ids) > f.Limit {
		ids = ids[:f.Limit]
	}
	return ids
}

func idsOf(ds []audit.Decision) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}

// TestUnindexedDecisionsAreListed: records whose index entries the indexer
// has not written yet are listed under every filter, in order, paged,
// beside indexed ones, and the same once indexed.
func TestUnindexedDecisionsAreListed(t *testing.T) {
	s := heldIndexer(t, filepath.Join(t.TempDir(), "p.db"))
	t0 := st.At(0)
	all := appendMixed(t, s, 40, t0)
	s.indexPending() // the older half indexed, the newer half not
	all = append(all, appendMixed(t, s, 40, t0.Add(time.Second))...)
	if n := unindexed(t, s); n != 40 {
		t.Fatalf("%d records unindexed, want 40", n)
	}
	filters := []struct {
		name string
		f    audit.DecisionFilter
	}{
		{"kind", audit.DecisionFilter{Kind: audit.KindTurn}},
		{"kind and outcome", audit.DecisionFilter{Kind: audit.KindInvoke, Outcome: audit.Denied}},
		{"outcome", audit.DecisionFilter{Outcome: audit.Allowed}},
		{"actor", audit.DecisionFilter{Actor: "actor-1"}},
		{"procedure", audit.DecisionFilter{Procedure: "proc__p0"}},
		{"procedure and actor", audit.DecisionFilter{Procedure: "proc__p1", Actor: "actor-2"}},
		{"a page across both", audit.DecisionFilter{Kind: audit.KindTurn, Limit: 7}},
		{"since, into the unindexed", audit.DecisionFilter{Actor: "actor-0", Since: t0.Add(time.Second + 10*time.Millisecond)}},
		{"until, the indexed only", audit.DecisionFilter{Outcome: audit.Allowed, Until: t0.Add(time.Second)}},
		{"the log itself", audit.DecisionFilter{}},
	}
	check := func(t *testing.T, when string) {
		for _, tc := range filters {
			t.Run(tc.name+" "+when, func(t *testing.T) {
				want := expected(all, tc.f)
				if got := idsOf(st.MustDecisions(t, s, tc.f)); !slices.Equal(got, want) {
					t.Fatalf("listed %d records %v\nwant %d %v", len(got), got, len(want), want)
				}
				// Paged with before, three at a time: the same records.
				var paged []string
				f := tc.f
				f.Limit = 3
				for {
					page := idsOf(st.MustDecisions(t, s, f))
					paged = append(paged, page...)
					if len(page) < 3 || (tc.f.Limit > 0 && len(paged) >= tc.f.Limit) {
						break
					}
					f.Before = page[len(page)-1]
				}
				if tc.f.Limit > 0 && len(paged) > tc.f.Limit {
					paged = paged[:tc.f.Limit]
				}
				if !slices.Equal(paged, want) {
					t.Fatalf("paged %v\nwant %v", paged, want)
				}
			})
		}
	}
	check(t, "with half unindexed")
	s.indexPending()
	if n := unindexed(t, s); n != 0 {
		t.Fatalf("%d records unindexed after indexing", n)
	}
	check(t, "all indexed")
}

// TestUnindexedSurviveACrash: a file copied while records wait for their
// index entries (what a crash leaves) lists them at once when opened, and
// its indexer writes their entries.
func TestUnindexedSurviveACrash(t *testing.T) {
	dir := t.TempDir()
	s := heldIndexer(t, filepath.Join(dir, "p.db"))
	all := appendMixed(t, s, 12, st.At(0))
	crashed := filepath.Join(dir, "crashed.db")
	if err := s.db.View(func(tx *bolt.Tx) error { return tx.CopyFile(crashed, 0o600) }); err != nil {
		t.Fatal(err)
	}
	r := mustOpen(t, crashed)
	f := audit.DecisionFilter{Actor: "actor-2"}
	if got, want := idsOf(st.MustDecisions(t, r, f)), expected(all, f); !slices.Equal(got, want) {
		t.Fatalf("after the crash, listed %v, want %v", got, want)
	}
	for deadline := time.Now().Add(5 * time.Second); unindexed(t, r) > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the reopened store's indexer left %d records unindexed", unindexed(t, r))
		}
	}
	if got, want := idsOf(st.MustDecisions(t, r, f)), expected(all, f); !slices.Equal(got, want) {
		t.Fatalf("once indexed, listed %v, want %v", got, want)
	}
}

// TestCloseIndexesUnindexedDecisions: a store closed with records unindexed
// writes their entries first, so that the file it leaves holds none.
func TestCloseIndexesUnindexedDecisions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	s := heldIndexer(t, path)
	appendMixed(t, s, 5, st.At(0))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	view(t, path, func(tx *bolt.Tx) error {
		if n := tx.Bucket(bUnindexed).Stats().KeyN; n != 0 {
			t.Errorf("the closed file holds %d unindexed records", n)
		}
		if n := tx.Bucket(bDecByProc).Stats().KeyN; n != 5 {
			t.Errorf("the closed file holds %d procedure index entries, want 5", n)
		}
		return nil
	})
}

// TestIndexerTakesNewRecords: the indexer wakes after a commit that left
// records unindexed (not only at Open, whose wake-up is over first).
func TestIndexerTakesNewRecords(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "p.db"))
	time.Sleep(10 * decisionIndexDelay)
	appendMixed(t, s, 3, st.At(0))
	for deadline := time.Now().Add(5 * time.Second); unindexed(t, s) > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d records still unindexed", unindexed(t, s))
		}
	}
}

// TestPruneTakesUnindexed: a pruned record leaves nothing in bUnindexed.
func TestPruneTakesUnindexed(t *testing.T) {
	s := heldIndexer(t, filepath.Join(t.TempDir(), "p.db"))
	all := appendMixed(t, s, 10, st.At(0))
	if _, err := s.PruneDecisions(ctx, all[6].At); err != nil {
		t.Fatal(err)
	}
	if n := unindexed(t, s); n != 4 {
		t.Fatalf("%d records unindexed after pruning 6 of 10, want 4", n)
	}
	f := audit.DecisionFilter{Kind: audit.KindTurn}
	if got, want := idsOf(st.MustDecisions(t, s, f)), expected(all[6:], f); !slices.Equal(got, want) {
		t.Fatalf("after the prune, listed %v, want %v", got, want)
	}
}

// TestIndexerSurvivesACorruptPage: bbolt panics on some corrupt pages; a
// corrupt page under bUnindexed makes the decision indexer log, not take
// the process down, at its first wake-up and at Close.
func TestIndexerSurvivesACorruptPage(t *testing.T) {
	dir := t.TempDir()
	s := heldIndexer(t, filepath.Join(dir, "p.db"))
	appendMixed(t, s, 300, st.At(0)) // enough keys for bUnindexed to leave its parent's page
	crashed := filepath.Join(dir, "crashed.db")
	var root uint64
	if err := s.db.View(func(tx *bolt.Tx) error {
		root = uint64(tx.Bucket(bUnindexed).Root())
		return tx.CopyFile(crashed, 0o600)
	}); err != nil {
		t.Fatal(err)
	}
	if root == 0 {
		t.Fatal("bUnindexed is still inline: no page of its own to corrupt")
	}
	f, err := os.OpenFile(crashed, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xff}, 4096), int64(root)*4096); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(crashed, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * decisionIndexDelay) // its first wake-up reads the page
	if _, err := r.ListDecisions(ctx, audit.DecisionFilter{Kind: audit.KindTurn}); err == nil {
		t.Error("a filtered listing over a corrupt page answered")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}
