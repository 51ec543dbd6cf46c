package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/reuse"
)

// The tools of SparseFill: SparseA and SparseB are each called by degree
// procedures and together by one, SparseOnly, the only exposed procedure
// calling either (the others call a tool the catalogue lacks, so are not
// read-only); the rest call SparseC.
const (
	SparseA = "sp_a"
	SparseB = "sp_b"
	SparseC = "sp_c"
)

// SparseOnly is the procedure of SparseFill calling both SparseA and
// SparseB.
var SparseOnly = NameOf(SparseA, SparseB)

// SparseFill makes s hold the n procedures of a fixture whose tool filter
// {SparseA, SparseB} is sparse: each tool is common (degree callers), the
// two together are one procedure (SparseOnly: every procedure is captured
// once and never used, so Find's order is by name, and SparseOnly's sorts
// last: a walk of the rank index meets it last). Find's old cost model chose to walk the
// rank index for it whenever degree² > (offset + limit) × n, and then read
// every procedure. Filled with the store's CaptureBatch when it has one.
// n must exceed 2 × degree.
func SparseFill(tb testing.TB, s procedures.Store, n, degree int) {
	tb.Helper()
	if n <= 2*degree {
		tb.Fatalf("SparseFill(%d, %d): n must exceed 2 × degree", n, degree)
	}
	cat, err := procedures.NewCatalogue([]procedures.Tool{
		{Name: SparseA, ReadOnly: true}, {Name: SparseB, ReadOnly: true}, {Name: SparseC, ReadOnly: true}})
	if err != nil {
		tb.Fatal(err)
	}
	MustPutCatalogue(tb, s, cat)
	ins := []procedures.CaptureInput{In([]string{SparseA, SparseB}, "h", "sparse-only", Base)}
	for i := 1; i < n; i++ {
		tool := SparseC
		switch {
		case i < degree:
			tool = SparseA
		case i < 2*degree-1:
			tool = SparseB
		}
		// (Its own tool first: every other name sorts before SparseOnly's.)
		ins = append(ins, In([]string{fmt.Sprintf("sp_0%06d", i), tool}, "h", fmt.Sprintf("sparse-%d", i), Base.Add(time.Duration(i)*time.Millisecond)))
	}
	if bc, ok := s.(BatchCapturer); ok {
		for len(ins) > 0 {
			m := min(2000, len(ins))
			if err := bc.CaptureBatch(context.Background(), ins[:m]); err != nil {
				tb.Fatalf("CaptureBatch: %v", err)
			}
			ins = ins[m:]
		}
		return
	}
	for _, in := range ins {
		if _, err := s.Capture(context.Background(), in); err != nil {
			tb.Fatalf("Capture: %v", err)
		}
	}
}

// testFindSparseTools: a tool filter whose tools are each common and
// rarely together (SparseFill, small: the walk of the rank index is chosen,
// reads its bound without filling the page and takes the rarest tool's
// callers instead) answers as the callers do, for
// every page, with and without its total, and with the exposed filter of
// a reuse suggestion, and a capture asked for that page answers it as
// Find does (CaptureInput.Page).
func testFindSparseTools(t *testing.T, newStore NewStore) {
	s := newStore(t)
	const n, degree = 400, 40 // embedded: n > walkPerCaller × degree
	SparseFill(t, s, n, degree)
	both := []string{SparseA, SparseB}
	// Old and new cost models: the walk, for every page tried here.
	if degree*degree <= 3*n {
		t.Fatalf("fixture: the walk is not chosen")
	}
	exposed := ptr(true)
	for _, tc := range []struct {
		name string
		q    procedures.Query
		want []string
	}{
		{"both", procedures.Query{Tools: both}, []string{SparseOnly}},
		{"both exposed", procedures.Query{Tools: both, Exposed: exposed}, []string{SparseOnly}},
		{"one exposed", procedures.Query{Tools: []string{SparseA}, Exposed: exposed}, []string{SparseOnly}},
		{"both, a third", procedures.Query{Tools: []string{SparseA, SparseB, SparseC}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, page := range []struct{ offset, limit int }{{0, 1}, {0, 2}, {1, 1}, {0, 3}} {
				for _, skip := range []bool{false, true} {
					q := tc.q
					q.Offset, q.Limit, q.SkipTotal = page.offset, page.limit, skip
					ps, total, err := s.Find(context.Background(), q)
					if err != nil {
						t.Fatal(err)
					}
					want := tc.want[min(page.offset, len(tc.want)):min(page.offset+page.limit, len(tc.want))]
					if got := names(ps); !slices.Equal(got, want) || (total != len(tc.want) && !(skip && total == -1)) {
						t.Fatalf("Find(%+v) = %v, total %d; want %v, total %d", q, got, total, want, len(tc.want))
					}
				}
			}
		})
	}
	// Bounded (the suggestion's page): the callers when there are few
	// enough (exact, with the total), else the walk of FindWalk entries
	// alone, which does not meet SparseOnly (it sorts last): total -1.
	// A tool no procedure calls: nothing to read, so every match met (total 0).
	for i, tc := range []struct {
		tools        []string
		limit, total int
		want         []string
	}{{both, 50, 1, []string{SparseOnly}}, {both, 1, -1, nil}, {[]string{SparseA, "sp_none"}, 1, 0, nil}} {
		q := procedures.Query{Tools: tc.tools, Exposed: exposed, Limit: tc.limit, SkipTotal: true, Bounded: true}
		ps, total, err := s.Find(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(ps); !slices.Equal(got, tc.want) || total != tc.total {
			t.Fatalf("Find(%+v) = %v, total %d; want %v, total %d", q, got, total, tc.want, tc.total)
		}
		// A capture asked for the same page (CaptureInput.Page) answers it
		// as Find did, read before its write: the procedure it creates
		// (which calls a tool the catalogue lacks) is not on it.
		in := In(append([]string{fmt.Sprintf("sp_new%d", i)}, tc.tools...), "h", fmt.Sprintf("sparse-new-%d", i), Base.Add(time.Hour))
		in.Page = &q
		res, err := s.Capture(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if !res.PageRead || !slices.Equal(names(res.Page), tc.want) || res.PageTotal != tc.total {
			t.Fatalf("Capture with Page %+v: read %v, page %v, total %d; want %v, total %d", q, res.PageRead, names(res.Page), res.PageTotal, tc.want, tc.total)
		}
	}
	svc := procedures.NewService(s, procedures.Options{})
	sg, err := svc.Suggest(context.Background(), both, "")
	if err != nil || sg == nil || sg.Tool != SparseOnly || sg.Reason != reuse.SuggestSameSignature {
		t.Fatalf("Suggest(%v) = %+v, %v; want %s, %s", both, sg, err, SparseOnly, reuse.SuggestSameSignature)
	}
}
