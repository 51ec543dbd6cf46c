package embedded

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/graph/storetest"
)

// TestDecisionIndexUpgrade: audit records stored before the actor, kind
// and outcome indexes existed (no entries, no marker) are indexed when the
// file is opened again: a filtered list finds them.
func TestDecisionIndexUpgrade(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		d := storetest.Decision(audit.KindTurn, "proc__a", "h", storetest.At(i))
		d.Actor = fmt.Sprintf("actor-%d", i%2)
		if err := s.AppendDecision(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	s.indexPending() // an old file has every record's entries, then loses them below
	err = s.db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bDecByField); err != nil {
			return err
		}
		if _, err := tx.CreateBucket(bDecByField); err != nil {
			return err
		}
		return tx.Bucket(bMeta).Delete(metaDecisionIndex)
	})
	if err != nil {
		t.Fatal(err)
	}
	f := audit.DecisionFilter{Actor: "actor-1"}
	if ds := storetest.MustDecisions(t, s, f); len(ds) != 0 {
		t.Fatalf("the index was not emptied: %d", len(ds))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if ds := storetest.MustDecisions(t, s, f); len(ds) != 3 {
		t.Fatalf("after the upgrade, actor-1 has %d records, want 3", len(ds))
	}
	if ds := storetest.MustDecisions(t, s, audit.DecisionFilter{Kind: audit.KindTurn, Outcome: audit.Allowed}); len(ds) != 6 {
		t.Fatalf("after the upgrade, allowed turns: %d, want 6", len(ds))
	}
}

// BenchmarkDecisionsFiltered: one filtered page (100 records) of an audit
// log of 1,000 and of 100,000 records, by each filter: the index walk
// makes a page cost about the same at both sizes. unindexed=50: the 50
// newest records wait for their index entries (decisionTail merges them).
func BenchmarkDecisionsFiltered(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		for _, tail := range []int{0, 50} {
			benchDecisionsFiltered(b, n, tail)
		}
	}
}

// benchDecisionsFiltered is BenchmarkDecisionsFiltered over n records, the
// tail newest of them unindexed.
func benchDecisionsFiltered(b *testing.B, n, tail int) {
	s, err := Open(filepath.Join(b.TempDir(), "p.db"), Options{NoSync: true, indexDelay: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	fillDecisions(b, s, 0, n-tail, appendIndexedDecision)
	fillDecisions(b, s, n-tail, tail, appendDecision)
	for _, c := range storetest.DecisionFilterCases(n) {
		b.Run(fmt.Sprintf("%d/unindexed=%d/%s", n, tail, c.Name), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := s.ListDecisions(context.Background(), c.Filter); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	_ = s.Close()
}

// fillDecisions appends records first to first+n-1 of a log with add, in
// batches: 20 actors, four kinds, one in seven denied, over 50
// procedures, a second apart.
func fillDecisions(tb testing.TB, s *Store, first, n int, add func(*bolt.Tx, audit.Decision) error) {
	tb.Helper()
	kinds := []audit.DecisionKind{audit.KindInvoke, audit.KindTurn, audit.KindGrant, audit.KindApproval}
	for start := first; start < first+n; start += 5000 {
		err := s.db.Update(func(tx *bolt.Tx) error {
			for i := start; i < min(first+n, start+5000); i++ {
				d := storetest.Decision(kinds[i%4], fmt.Sprintf("proc__p%d", i%50), "h", storetest.At(i))
				d.Actor = fmt.Sprintf("actor-%d", i%20)
				if i%7 == 0 {
					d.Outcome = audit.Denied
				}
				if err := add(tx, d); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
}
