package neo4j

import (
	"context"
	"testing"

	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
)

// TestFindSparseToolsPlanBounded: find_filtered.cypher for a tool filter
// whose tools are each common and rarely together (storetest.SparseFill:
// the reuse suggestion's query, exposed, a page of 50, no total) costs the
// same db hits at 2,000 procedures as at 6,000 (the walk's bound,
// procedures.Query.FindWalk, then the rarest tool's callers), where the
// cost model alone chose to walk the whole rank index at both sizes.
func TestFindSparseToolsPlanBounded(t *testing.T) {
	const degree = 600
	q := procedures.Query{Tools: []string{storetest.SparseA, storetest.SparseB}, Exposed: new(bool), Limit: 50, SkipTotal: true}
	*q.Exposed = true
	hits := map[int]int64{}
	s := bulkStore{freshStore(t), t}
	for _, n := range []int{2_000, 6_000} {
		if degree*degree <= (q.Offset+q.Limit)*n {
			t.Fatalf("n=%d: the cost model does not choose the walk", n)
		}
		run(t, s.Store, testdata(t, "clean"), nil)
		s.classes.set(nil)
		storetest.SparseFill(t, s, n, degree)
		h, rec := dbHits(t, s.Store, "find_filtered", filteredParams(t, s.Store, q))
		ps, _ := field(rec, "procedures").([]any)
		if len(ps) != 1 {
			t.Fatalf("n=%d: %d procedures, want 1 (%s)", n, len(ps), storetest.SparseOnly)
		}
		hits[n] = h
	}
	// The same statement on the same shape: equal up to the count store's
	// and the planner's noise, far below the 4,000 procedures more a walk
	// of the whole index reads.
	if d := hits[6_000] - hits[2_000]; d > 200 || d < -200 {
		t.Fatalf("db hits %v: they grow with the number of procedures", hits)
	}
	t.Logf("db hits: %v", hits)
}

// filteredParams returns the parameters findOne gives find_filtered.cypher
// for q (summary filters: the classes s holds).
func filteredParams(tb testing.TB, s *Store, q procedures.Query) map[string]any {
	tb.Helper()
	params, err := findParams(q)
	if err != nil {
		tb.Fatal(err)
	}
	classes, err := s.readClasses(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	params["classes"], params["known"] = selectClasses(classes, q)
	params["known_catalogue"], params["skipTotal"] = nil, q.SkipTotal
	return params
}

// TestFindBoundedPlanBounded: find_filtered.cypher for a Bounded page (the
// reuse suggestion's: exposed, a page of 50, no total) costs the same db
// hits at 2,000 procedures as at 6,000 although its tools' callers triple
// (storetest.SparseFill, each tool called by a quarter of the
// procedures): the walk of at most FindWalk entries alone, where the exact
// page reads the rarest tool's callers after it.
func TestFindBoundedPlanBounded(t *testing.T) {
	exposed := true
	q := procedures.Query{Tools: []string{storetest.SparseA, storetest.SparseB}, Exposed: &exposed, Limit: 50, SkipTotal: true, Bounded: true}
	exact := q
	exact.Bounded = false
	hits, exactHits := map[int]int64{}, map[int]int64{}
	s := bulkStore{freshStore(t), t}
	for _, n := range []int{2_000, 6_000} {
		run(t, s.Store, testdata(t, "clean"), nil)
		s.classes.set(nil)
		storetest.SparseFill(t, s, n, n/4)
		h, rec := dbHits(t, s.Store, "find_filtered", filteredParams(t, s.Store, q))
		if ps, _ := field(rec, "procedures").([]any); len(ps) != 0 {
			t.Fatalf("n=%d: %d procedures, want none (%s sorts last, past the walk)", n, len(ps), storetest.SparseOnly)
		}
		hits[n] = h
		exactHits[n], _ = dbHits(t, s.Store, "find_filtered", filteredParams(t, s.Store, exact))
	}
	if d := hits[6_000] - hits[2_000]; d > 200 || d < -200 {
		t.Fatalf("db hits %v: they grow with the number of procedures (the exact page: %v)", hits, exactHits)
	}
	if exactHits[6_000]-exactHits[2_000] < 1_000 {
		t.Fatalf("the exact page's db hits %v do not grow with the callers: the fixture does not show the bound", exactHits)
	}
	t.Logf("db hits: bounded %v, exact %v", hits, exactHits)
}
