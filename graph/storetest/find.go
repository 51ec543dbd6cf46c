package storetest

import (
	"fmt"
	"testing"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
)

// findFixture is a small graph covering every Find filter. Frequencies are
// distinct, so the expected order is the order of the fields below.
type findFixture struct {
	rw2, ro2, w3, ref, opq, ro1, fail string
}

// findCatalogue marks r1, r2 and r3 read-only and w1 state-changing.
func findCatalogue(tb testing.TB, w1ReadOnly bool) *procedures.Catalogue {
	tb.Helper()
	c, err := procedures.NewCatalogue([]procedures.Tool{
		{Name: "r1", ReadOnly: true}, {Name: "r2", ReadOnly: true}, {Name: "r3", ReadOnly: true}, {Name: "w1", ReadOnly: w1ReadOnly},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// MustPutCatalogue puts c into s.
func MustPutCatalogue(tb testing.TB, s procedures.Store, c *procedures.Catalogue) {
	tb.Helper()
	if err := s.PutCatalogue(ctx, c); err != nil {
		tb.Fatalf("PutCatalogue: %v", err)
	}
}

func buildFindFixture(t *testing.T, s procedures.Store) findFixture {
	t.Helper()
	type spec struct {
		sig    []string
		freq   int
		causes []string
		opaque bool
		failed bool
	}
	specs := []spec{
		{sig: []string{"r1", "w1"}, freq: 7, causes: []string{"c2"}},
		{sig: []string{"r1", "r2"}, freq: 6, causes: []string{"c1"}},
		{sig: []string{"r1", "r2", "w1"}, freq: 5, causes: []string{"c1", "c2"}},
		{sig: []string{"proc__r1__r2", "r3"}, freq: 4},
		{sig: []string{"r2", "r3"}, freq: 3, opaque: true},
		{sig: []string{"r3"}, freq: 2, causes: []string{"c3"}},
		{sig: []string{"r1", "r3"}, freq: 1, failed: true},
	}
	for i, sp := range specs {
		for k := 0; k < sp.freq; k++ {
			in := In(sp.sig, fmt.Sprintf("h%d", i), fmt.Sprintf("k%d", k), At(i))
			in.Version.Opaque = sp.opaque
			if sp.failed {
				in = Failed(in)
			}
			if len(sp.causes) > 0 {
				in = WithCause(in, sp.causes[k%len(sp.causes)], "")
			}
			MustCapture(t, s, in)
		}
	}
	// Without a catalogue every tool is unknown: nothing is read-only.
	if _, total := MustFind(t, s, procedures.Query{ReadOnly: ptr(true)}); total != 0 {
		t.Fatalf("read-only without a catalogue: total %d, want 0", total)
	}
	if _, total := MustFind(t, s, procedures.Query{ReadOnly: ptr(false)}); total != len(specs) {
		t.Fatalf("not read-only without a catalogue: total %d, want %d", total, len(specs))
	}
	MustPutCatalogue(t, s, findCatalogue(t, false))
	n := func(i int) string { return NameOf(specs[i].sig...) }
	return findFixture{rw2: n(0), ro2: n(1), w3: n(2), ref: n(3), opq: n(4), ro1: n(5), fail: n(6)}
}

func testFind(t *testing.T, newStore NewStore) {
	t.Run("filters", func(t *testing.T) {
		s := newStore(t)
		f := buildFindFixture(t, s)
		all := []string{f.rw2, f.ro2, f.w3, f.ref, f.opq, f.ro1, f.fail}
		yes, no := ptr(true), ptr(false)
		cases := []struct {
			name  string
			q     procedures.Query
			want  []string
			total int
		}{
			{"no filter", procedures.Query{}, all, 7},
			{"cause", procedures.Query{Causes: []string{"c1"}}, []string{f.ro2, f.w3}, 2},
			{"causes any of", procedures.Query{Causes: []string{"c1", "c3"}}, []string{f.ro2, f.w3, f.ro1}, 3},
			{"cause of a shared procedure", procedures.Query{Causes: []string{"c2"}}, []string{f.rw2, f.w3}, 2},
			{"unknown cause", procedures.Query{Causes: []string{"nope"}}, nil, 0},
			{"tool", procedures.Query{Tools: []string{"r1"}}, []string{f.rw2, f.ro2, f.w3, f.fail}, 4},
			{"tools all of", procedures.Query{Tools: []string{"w1", "r1"}}, []string{f.rw2, f.w3}, 2},
			{"tools with an unknown one", procedures.Query{Tools: []string{"r1", "nope"}}, nil, 0},
			{"procedure reference as tool", procedures.Query{Tools: []string{f.ro2}}, []string{f.ref}, 1},
			{"min tools 2", procedures.Query{MinTools: 2}, []string{f.rw2, f.ro2, f.w3, f.ref, f.opq, f.fail}, 6},
			{"min tools 3", procedures.Query{MinTools: 3}, []string{f.w3}, 1},
			{"status succeeded", procedures.Query{Status: procedures.StatusSucceeded}, all[:6], 6},
			{"status failed", procedures.Query{Status: procedures.StatusFailed}, []string{f.fail}, 1},
			{"read-only", procedures.Query{ReadOnly: yes}, []string{f.ro2, f.ref, f.opq, f.ro1, f.fail}, 5},
			{"not read-only", procedures.Query{ReadOnly: no}, []string{f.rw2, f.w3}, 2},
			{"exposed", procedures.Query{Exposed: yes}, []string{f.ro2, f.ref}, 2},
			{"exposed allow mutating", procedures.Query{Exposed: yes, AllowMutating: true}, []string{f.rw2, f.ro2, f.w3, f.ref}, 4},
			{"not exposed", procedures.Query{Exposed: no}, []string{f.rw2, f.w3, f.opq, f.ro1, f.fail}, 5},
			{"not exposed allow mutating", procedures.Query{Exposed: no, AllowMutating: true}, []string{f.opq, f.ro1, f.fail}, 3},
			{"combined", procedures.Query{Causes: []string{"c1", "c2"}, Tools: []string{"r2"}, Exposed: yes}, []string{f.ro2}, 1},
			{"filter before limit", procedures.Query{Exposed: yes, Limit: 1}, []string{f.ro2}, 2},
			{"filter before offset", procedures.Query{Exposed: yes, AllowMutating: true, Limit: 2, Offset: 1}, []string{f.ro2, f.w3}, 4},
			{"offset past the end", procedures.Query{Exposed: yes, Offset: 5}, nil, 2},
			{"causes with limit and offset", procedures.Query{Causes: []string{"c1", "c2"}, Limit: 1, Offset: 1}, []string{f.ro2}, 3},
			{"tools and status with limit", procedures.Query{Tools: []string{"r1"}, Status: procedures.StatusSucceeded, Limit: 2}, []string{f.rw2, f.ro2}, 3},
			{"limit and offset", procedures.Query{Limit: 3, Offset: 2}, []string{f.w3, f.ref, f.opq}, 7},
			{"limit 0 means no limit", procedures.Query{Offset: 5}, []string{f.ro1, f.fail}, 7},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				ps, total := MustFind(t, s, c.q)
				requireEqual(t, "names", names(ps), c.want)
				if total != c.total {
					t.Errorf("total = %d, want %d", total, c.total)
				}
				// Without the total, the page is the same; the total is
				// either -1 or right.
				q := c.q
				q.SkipTotal = true
				ps, total = MustFind(t, s, q)
				requireEqual(t, "names (skip total)", names(ps), c.want)
				if total != -1 && total != c.total {
					t.Errorf("skip total: total = %d, want -1 or %d", total, c.total)
				}
			})
		}
	})

	t.Run("returned procedures are complete", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, WithCause(In(sigAB, "h1", "k1", At(0)), "c1", ""))
		ps, _ := MustFind(t, s, procedures.Query{})
		if len(ps) != 1 || ps[0].CodeHash != "h1" || ps[0].Code == "" || len(ps[0].Causes) != 1 || ps[0].Frequency != 1 {
			t.Fatalf("Find = %+v", ps)
		}
	})

	t.Run("order is frequency then last used then name", func(t *testing.T) {
		s := newStore(t)
		type spec struct {
			sig      []string
			freq     int
			lastUsed int // seconds after Base; 0 means never
		}
		a := spec{[]string{"a1", "a2"}, 3, 0}
		b := spec{[]string{"b1", "b2"}, 2, 20}
		c := spec{[]string{"c1", "c2"}, 2, 10}
		g := spec{[]string{"g1", "g2"}, 2, 10}
		d := spec{[]string{"d1", "d2"}, 2, 0}
		e := spec{[]string{"e1", "e2"}, 2, 0}
		f := spec{[]string{"f1", "f2"}, 1, 30}
		for _, sp := range []spec{e, d, g, f, c, b, a} { // not the expected order
			for k := 0; k < sp.freq; k++ {
				MustCapture(t, s, In(sp.sig, "h", fmt.Sprintf("k%d", k), At(1)))
			}
			if sp.lastUsed != 0 { // replay under a counted key: last used moves, frequency does not
				MustRecordUse(t, s, use(NameOf(sp.sig...), "", "k0", true, At(sp.lastUsed)))
			}
		}
		want := []string{NameOf(a.sig...), NameOf(b.sig...), NameOf(c.sig...), NameOf(g.sig...), NameOf(d.sig...), NameOf(e.sig...), NameOf(f.sig...)}
		ps, total := MustFind(t, s, procedures.Query{})
		requireEqual(t, "order", names(ps), want)
		if total != len(want) {
			t.Errorf("total = %d, want %d", total, len(want))
		}
		for off := 0; off < len(want); off += 3 {
			ps, _ := MustFind(t, s, procedures.Query{Limit: 3, Offset: off})
			requireEqual(t, fmt.Sprintf("page at %d", off), names(ps), want[off:min(off+3, len(want))])
		}
	})

	testFindAgreesWithGet(t, newStore)

	t.Run("invalid query is rejected", func(t *testing.T) {
		s := newStore(t)
		for _, q := range []procedures.Query{{Limit: -1}, {Offset: -1}, {MinTools: -1}, {Status: "maybe"}} {
			_, _, err := s.Find(ctx, q)
			RequireCode(t, err, fault.CodeInvalid)
		}
	})
}
