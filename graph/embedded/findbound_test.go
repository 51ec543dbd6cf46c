package embedded

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
)

// TestFindSparseToolsReadsBounded: a tool-filtered page whose tools are each
// common and rarely together (storetest.SparseFill: the reuse suggestion's
// query, exposed, a page of 50, no total) reads the same number of index
// entries at 10,000 procedures as at 19,000 (the walk's bound, walkPerCaller
// per caller of the rarest tool, then its callers), where the cost model
// alone chose to walk the whole rank index at both sizes.
func TestFindSparseToolsReadsBounded(t *testing.T) {
	const degree = 1000
	q := procedures.Query{Tools: []string{storetest.SparseA, storetest.SparseB}, Exposed: ptrTo(true), Limit: 50, SkipTotal: true}
	reads := map[int]int{}
	for _, n := range []int{10_000, 19_000} {
		if degree*degree <= (q.Offset+q.Limit)*n {
			t.Fatalf("n=%d: the cost model does not choose the walk", n)
		}
		s, err := Open(filepath.Join(t.TempDir(), "p.db"), Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		storetest.SparseFill(t, s, n, degree)
		err = s.view(context.Background(), func(tx *bolt.Tx) error {
			page, _, read, err := findIndexed(tx, &q)
			if err != nil {
				return err
			}
			if len(page) != 1 || string(page[0]) != storetest.SparseOnly {
				t.Fatalf("n=%d: page %q, want [%s]", n, page, storetest.SparseOnly)
			}
			reads[n] = read
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if want := max(q.FindWalk(), walkPerCaller*degree) + 2*degree + 1; reads[10_000] != reads[19_000] || reads[19_000] > want {
		t.Fatalf("index entries read: %v; want the same at both sizes, at most %d (the walk's bound and the callers, with their rank entries)", reads, want)
	}
	t.Logf("index entries read: %v", reads)
}

// TestFindBoundedReadsAtMostFindWalk: a Bounded page (the reuse
// suggestion's) reads at most FindWalk index entries whatever the degree of
// its tools, which grows with the store here (storetest.SparseFill, each
// tool called by a quarter of the procedures): the walk alone, however
// sparse its matches. With tools few enough procedures call, it reads their
// callers and is exact.
func TestFindBoundedReadsAtMostFindWalk(t *testing.T) {
	// A page of 5: FindWalk 80, BoundedCallers 40 (the suggestion's page
	// of 50 reads ten times as many; a small page keeps the fill small).
	q := procedures.Query{Tools: []string{storetest.SparseA, storetest.SparseB}, Exposed: ptrTo(true), Limit: 5, SkipTotal: true, Bounded: true}
	for _, tc := range []struct {
		name      string
		n, degree int
		want      []string // the page; nil: whatever the walk met (none here: SparseOnly sorts last)
	}{
		{"common tools, 600", 600, 150, nil},
		{"common tools, 1800", 1_800, 450, nil},
		{"rare tools", 600, q.BoundedCallers() - 1, []string{storetest.SparseOnly}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(filepath.Join(t.TempDir(), "p.db"), Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			storetest.SparseFill(t, s, tc.n, tc.degree)
			err = s.view(context.Background(), func(tx *bolt.Tx) error {
				page, _, read, err := findIndexed(tx, &q)
				if err != nil {
					return err
				}
				var got []string
				for _, k := range page {
					got = append(got, string(k))
				}
				if !slices.Equal(got, tc.want) {
					t.Fatalf("page %q, want %q", got, tc.want)
				}
				if read > q.FindWalk() {
					t.Fatalf("read %d index entries, more than FindWalk (%d)", read, q.FindWalk())
				}
				t.Logf("n=%d degree=%d: %d index entries read", tc.n, tc.degree, read)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }
