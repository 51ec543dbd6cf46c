package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
)

// testRetire checks SetRetired: the retirement is kept and read back, the
// decision appended in the same transaction, and the procedure's Class
// follows, so Find's exposed filter and its totals leave a retired
// procedure out while the unfiltered list still holds it with its state.
func testRetire(t *testing.T, newStore NewStore) {
	name := NameOf(sigAB...)
	exposedOnly := procedures.Query{Exposed: ptr(true)}
	setup := func(t *testing.T) procedures.Store {
		s := mustExposedPair(t, newStore)
		if ps, total := MustFind(t, s, exposedOnly); total != 1 || len(ps) != 1 {
			t.Fatalf("before retiring: exposed %d (total %d), want 1", len(ps), total)
		}
		return s
	}
	retire := func(t *testing.T, s procedures.Store, r *procedures.Retirement, at int) *procedures.Procedure {
		t.Helper()
		d := Decision(audit.KindRetire, name, "h1", At(at))
		d.Reason = audit.ReasonRetired
		if r == nil {
			d.Reason = audit.ReasonUnretired
		}
		p, err := s.SetRetired(ctx, name, r, d)
		if err != nil {
			t.Fatalf("SetRetired: %v", err)
		}
		return p
	}

	t.Run("retire and bring back", func(t *testing.T) {
		s := setup(t)
		p := retire(t, s, &procedures.Retirement{RetiredBy: "admin", RetiredAt: At(1), Reason: "superseded"}, 1)
		for _, got := range []*procedures.Procedure{p, MustGet(t, s, name)} {
			if got.Retired == nil || got.Retired.RetiredBy != "admin" || got.Retired.Reason != "superseded" {
				t.Fatalf("Retired = %+v, want admin, superseded", got.Retired)
			}
			RequireTime(t, "retired_at", got.Retired.RetiredAt, At(1))
		}
		if ps, total := MustFind(t, s, exposedOnly); total != 0 || len(ps) != 0 {
			t.Errorf("retired: exposed %v (total %d), want none", names(ps), total)
		}
		if _, total := MustFind(t, s, procedures.Query{Exposed: ptr(false)}); total != 1 {
			t.Errorf("retired: not exposed total %d, want 1", total)
		}
		ps, total := MustFind(t, s, procedures.Query{})
		if total != 1 || len(ps) != 1 || ps[0].Retired == nil {
			t.Errorf("retired: unfiltered Find = %d (total %d), want it listed with its retirement", len(ps), total)
		}
		if _, total := MustFind(t, s, procedures.Query{ReadOnly: ptr(true), MinTools: 2}); total != 1 {
			t.Errorf("retired: read-only total %d, want 1 (retiring is not reclassifying)", total)
		}
		p = retire(t, s, nil, 2)
		if p.Retired != nil || MustGet(t, s, name).Retired != nil {
			t.Fatalf("brought back: Retired = %+v, want nil", p.Retired)
		}
		if _, total := MustFind(t, s, exposedOnly); total != 1 {
			t.Errorf("brought back: exposed total %d, want 1", total)
		}
		ds := MustDecisions(t, s, audit.DecisionFilter{Procedure: name})
		if len(ds) != 2 || ds[0].Kind != audit.KindRetire || ds[0].Reason != audit.ReasonUnretired || ds[1].Reason != audit.ReasonRetired {
			t.Errorf("decisions = %+v, want retired then unretired", ds)
		}
	})

	t.Run("callers of a retired procedure are reclassified, and back", func(t *testing.T) {
		s := setup(t)
		// mid calls the base procedure, top calls mid: both exposed.
		mid := In([]string{name, "tool_a"}, "hm", "km", At(1))
		mid.Name = "proc__mid"
		MustCapture(t, s, mid)
		top := In([]string{"proc__mid", "tool_b"}, "ht", "kt", At(2))
		top.Name = "proc__top"
		MustCapture(t, s, top)
		exposed := func(want int) {
			t.Helper()
			ps, total := MustFind(t, s, exposedOnly)
			if total != want || len(ps) != want {
				t.Fatalf("exposed %v (total %d), want %d", names(ps), total, want)
			}
			// Find's read-only and exposed filters agree with the
			// classification Get returns, procedure by procedure.
			all, _ := MustFind(t, s, procedures.Query{})
			requireFindAgreesWithGet(t, s, names(all))
		}
		exposed(3)
		retire(t, s, &procedures.Retirement{RetiredBy: "admin", RetiredAt: At(3), Reason: "r"}, 3)
		exposed(0)
		if ps, total := MustFind(t, s, procedures.Query{ReadOnly: ptr(true)}); total != 1 || ps[0].Name != name {
			t.Errorf("after retiring the callee: read-only %v, want only the callee (its callers have a problem)", names(ps))
		}
		retire(t, s, nil, 4)
		exposed(3)
		if _, total := MustFind(t, s, procedures.Query{ReadOnly: ptr(true)}); total != 3 {
			t.Errorf("after bringing the callee back: read-only total %d, want 3", total)
		}
		// A caller captured while its callee is retired is classified so.
		retire(t, s, &procedures.Retirement{RetiredBy: "admin", RetiredAt: At(5), Reason: "r"}, 5)
		late := In([]string{name, "tool_b"}, "hl", "kl", At(6))
		late.Name = "proc__late"
		MustCapture(t, s, late)
		exposed(0)
	})

	t.Run("an unknown procedure is not found and nothing is appended", func(t *testing.T) {
		s := newStore(t)
		_, err := s.SetRetired(ctx, "proc__nothing", &procedures.Retirement{RetiredBy: "a", RetiredAt: At(0), Reason: "r"},
			Decision(audit.KindRetire, "proc__nothing", "h", At(0)))
		RequireCode(t, err, fault.CodeNotFound)
		if ds := MustDecisions(t, s, audit.DecisionFilter{}); len(ds) != 0 {
			t.Errorf("decisions = %+v, want none", ds)
		}
	})

	t.Run("captures and a catalogue change keep a procedure retired", func(t *testing.T) {
		s := setup(t)
		retire(t, s, &procedures.Retirement{RetiredBy: "admin", RetiredAt: At(1), Reason: "r"}, 1)
		p := MustCapture(t, s, In(sigAB, "h2", "k2", At(2))).Procedure
		if p.Retired == nil || p.Frequency != 2 {
			t.Fatalf("after a capture: Retired %+v, frequency %d; want retired, 2", p.Retired, p.Frequency)
		}
		cat, err := procedures.NewCatalogue([]procedures.Tool{{Name: "tool_a", ReadOnly: true}, {Name: "tool_b", ReadOnly: true}, {Name: "tool_c"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.PutCatalogue(ctx, cat); err != nil {
			t.Fatal(err)
		}
		if _, total := MustFind(t, s, exposedOnly); total != 0 || MustGet(t, s, name).Retired == nil {
			t.Errorf("after a capture and a catalogue change: exposed total %d, want 0 and still retired", total)
		}
	})

	t.Run("retiring racing captures loses no count and ends as the last write", func(t *testing.T) {
		s := setup(t)
		const n = 16
		var wg sync.WaitGroup
		errs := make(chan error, 2*n)
		for i := range n {
			wg.Go(func() {
				if _, err := s.Capture(ctx, In(sigAB, "h1", fmt.Sprintf("r%d", i), At(i))); err != nil {
					errs <- err
				}
			})
			wg.Go(func() {
				var r *procedures.Retirement
				if i%2 == 0 {
					r = &procedures.Retirement{RetiredBy: "admin", RetiredAt: At(i), Reason: "r"}
				}
				d := Decision(audit.KindRetire, name, "h1", At(i))
				if _, err := s.SetRetired(ctx, name, r, d); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		p := MustGet(t, s, name)
		if p.Frequency != n+1 {
			t.Errorf("frequency = %d, want %d", p.Frequency, n+1)
		}
		exposed := 1
		if p.Retired != nil {
			exposed = 0
		}
		if _, total := MustFind(t, s, exposedOnly); total != exposed {
			t.Errorf("exposed total %d with Retired %+v, want %d", total, p.Retired, exposed)
		}
		if ds := MustDecisions(t, s, audit.DecisionFilter{Procedure: name, Kind: audit.KindRetire}); len(ds) != n {
			t.Errorf("%d retire decisions, want %d", len(ds), n)
		}
	})
}
