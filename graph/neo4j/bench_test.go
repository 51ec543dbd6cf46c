package neo4j

import (
	"context"
	"fmt"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
)

func BenchmarkCapture(b *testing.B) {
	s := freshStore(b)
	b.Run("sequential", func(b *testing.B) { storetest.BenchCapture(b, s) })
	b.Run("parallel16", func(b *testing.B) { storetest.BenchCaptureParallel(b, s, 16) })
}

// BenchmarkFind measures Find pages of 25 on 1k and 10k procedures (and
// 100k with -neo4j.big), filled fast by bulkStore.
func BenchmarkFind(b *testing.B) {
	s := bulkStore{freshStore(b), b}
	sizes := []int{1_000, 10_000}
	if *big {
		sizes = append(sizes, 100_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { storetest.BenchFind(b, s, n) })
	}
}

// BenchmarkSuggest measures the reuse suggestion and a tool-filtered Find
// over 1k procedures whose filtered tools are each common and rarely
// together (storetest.BenchSuggest; and 100k with -neo4j.big), a cleaned
// database per size, filled fast by bulkStore.
func BenchmarkSuggest(b *testing.B) {
	sizes := []int{1_000}
	if *big {
		sizes = append(sizes, 100_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			s := bulkStore{freshStore(b), b}
			storetest.BenchSuggest(b, s, n)
			exposed := true
			q := procedures.Query{Tools: []string{storetest.SparseA, storetest.SparseB}, Exposed: &exposed, Limit: 50, SkipTotal: true}
			hits, _ := dbHits(b, s.Store, "find_filtered", filteredParams(b, s.Store, q))
			b.Logf("n=%d: the suggestion's find_filtered: %d db hits", n, hits)
		})
	}
}

// BenchmarkGrantsList measures the service's list of grants (10 granted)
// over 10k procedures (and 100k with -neo4j.big), filled fast by bulkStore.
func BenchmarkGrantsList(b *testing.B) {
	s := bulkStore{freshStore(b), b}
	sizes := []int{10_000}
	if *big {
		sizes = append(sizes, 100_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { storetest.BenchGrantsList(b, s, n) })
	}
}

// BenchmarkFindOverhead compares, in one run, Find (limit 25, no filter) with
// the same statements and parameters run raw through the driver in one read
// transaction, records collected but not mapped.
func BenchmarkFindOverhead(b *testing.B) {
	s := bulkStore{freshStore(b), b}
	n := 10_000
	if *big {
		n = 100_000
	}
	storetest.Fill(b, s, n)
	q := procedures.Query{Limit: 25}
	params, err := findParams(q)
	if err != nil {
		b.Fatal(err)
	}
	pageQuery, countQuery := findQueries(q)
	ctx := context.Background()
	// The fill's writes make the server replan the statements: warm up
	// first, so the first sub-benchmark does not pay for it alone.
	for range 5 {
		if _, _, err := s.Find(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("store", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if ps, _, err := s.Find(ctx, q); err != nil || len(ps) != 25 {
				b.Fatalf("Find: %d, %v", len(ps), err)
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sess := s.driver.NewSession(ctx, neo4j.SessionConfig{AccessMode: neo4j.AccessModeRead, DatabaseName: s.db, BookmarkManager: s.bookmarks})
			n, err := neo4j.ExecuteRead(ctx, sess, func(tx neo4j.ManagedTransaction) (int, error) {
				page, err := collect(ctx, tx, pageQuery, params)
				if err != nil {
					return 0, err
				}
				count, err := collect(ctx, tx, countQuery, params)
				return len(page) + len(count), err
			})
			sess.Close(ctx)
			if err != nil || n != 26 {
				b.Fatalf("raw: %d, %v", n, err)
			}
		}
	})
}

// BenchmarkApprovalRoundTrip measures the store's part of an approval
// (create under the gate lock, resolve, claim, finish).
func BenchmarkApprovalRoundTrip(b *testing.B) {
	storetest.BenchApprovalRoundTrip(b, freshStore(b))
}

// BenchmarkCaptureLift measures a capture through the service with lifting
// on against "lift": false, interleaved (storetest.BenchCaptureLift): the
// same code each time (same) and a new task id each time (varied).
func BenchmarkCaptureLift(b *testing.B) {
	s := freshStore(b)
	b.Run("same", func(b *testing.B) { storetest.BenchCaptureLift(b, s, true) })
	b.Run("varied", func(b *testing.B) { storetest.BenchCaptureLift(b, s, false) })
}

// BenchmarkRecordRun measures what health and demotion add to a replay's
// write: its use with the run against the same use without one,
// interleaved (storetest.BenchRecordRun).
func BenchmarkRecordRun(b *testing.B) { storetest.BenchRecordRun(b, freshStore(b)) }
