package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
)

// testDemotion: runs of the current version demote and lift a procedure
// in the store (docs/design.md "Health of each version",
// procedures.DemotedAfter): demoted at the --demote-after'th consecutive
// failure, in the same write, its Class then leaving Find's exposed
// filter and totals; a success or a promote lifts it; runs of another
// version change nothing; 0 never demotes; the demotion survives a dump
// and a merge; 16 concurrent runners demote it once.
func testDemotion(t *testing.T, newStore NewStore) {
	name := NameOf(sigAB...)
	exposedOnly := procedures.Query{Exposed: ptr(true)}
	setup := func(t *testing.T) procedures.Store { return mustExposedPair(t, newStore) }
	fail := func(t *testing.T, s procedures.Store, hash string, after, n int) procedures.UseResult {
		t.Helper()
		in := run(name, hash, fmt.Sprintf("f%d", n), procedures.FailureToolError, time.Millisecond, At(10+n))
		in.DemoteAfter = after
		return MustRecordUse(t, s, in)
	}
	succeed := func(t *testing.T, s procedures.Store, hash string, after, n int) procedures.UseResult {
		t.Helper()
		in := run(name, hash, fmt.Sprintf("s%d", n), "", time.Millisecond, At(10+n))
		in.DemoteAfter = after
		return MustRecordUse(t, s, in)
	}
	exposed := func(t *testing.T, s procedures.Store, want int, when string) {
		t.Helper()
		if ps, total := MustFind(t, s, exposedOnly); total != want || len(ps) != want {
			t.Errorf("%s: exposed %v (total %d), want %d", when, names(ps), total, want)
		}
	}

	t.Run("the third failure demotes, a success lifts", func(t *testing.T) {
		s := setup(t)
		for i := range 2 {
			if res := fail(t, s, "", 3, i); res.Demotion != procedures.DemotionNone || res.Procedure.Demoted {
				t.Fatalf("failure %d: demotion %q, demoted %v; want none before the third", i+1, res.Demotion, res.Procedure.Demoted)
			}
		}
		exposed(t, s, 1, "after two failures")
		res := fail(t, s, "", 3, 2)
		if res.Demotion != procedures.DemotionDemoted || !res.Procedure.Demoted || !MustGet(t, s, name).Demoted {
			t.Fatalf("third failure: demotion %q, demoted %v; want demoted", res.Demotion, res.Procedure.Demoted)
		}
		exposed(t, s, 0, "demoted")
		if ps, total := MustFind(t, s, procedures.Query{}); total != 1 || len(ps) != 1 || !ps[0].Demoted {
			t.Errorf("demoted: unfiltered Find = %d (total %d), want it listed as demoted", len(ps), total)
		}
		if res := fail(t, s, "", 3, 3); res.Demotion != procedures.DemotionNone || !res.Procedure.Demoted {
			t.Errorf("a fourth failure: demotion %q, demoted %v; want it to stay demoted, reported once", res.Demotion, res.Procedure.Demoted)
		}
		res = succeed(t, s, "", 3, 4)
		if res.Demotion != procedures.DemotionLifted || res.Procedure.Demoted || MustGet(t, s, name).Demoted {
			t.Fatalf("a success: demotion %q, demoted %v; want lifted", res.Demotion, res.Procedure.Demoted)
		}
		exposed(t, s, 1, "lifted")
	})

	t.Run("runs of another version leave it", func(t *testing.T) {
		s := setup(t)
		MustCapture(t, s, In(sigAB, "h2", "k2", At(1)))
		for i := range 4 {
			fail(t, s, "h2", 3, i)
		}
		if MustGet(t, s, name).Demoted {
			t.Fatal("failures of h2, not the current version, demoted the procedure")
		}
		for i := range 3 {
			fail(t, s, "h1", 3, 10+i)
		}
		if res := succeed(t, s, "h2", 3, 20); res.Demotion != procedures.DemotionNone || !res.Procedure.Demoted {
			t.Errorf("a success of h2 lifted the demotion of h1 (demotion %q)", res.Demotion)
		}
	})

	t.Run("a promote lifts it", func(t *testing.T) {
		s := setup(t)
		MustCapture(t, s, In(sigAB, "h2", "k2", At(1)))
		for i := range 3 {
			fail(t, s, "", 3, i)
		}
		exposed(t, s, 0, "demoted")
		p, err := s.Promote(ctx, name, "h2", Decision(procedures.KindPromote, name, "h2", At(30)))
		if err != nil {
			t.Fatal(err)
		}
		if p.Demoted || MustGet(t, s, name).Demoted {
			t.Fatal("promoting h2 left the procedure demoted")
		}
		exposed(t, s, 1, "promoted")
	})

	t.Run("0 never demotes", func(t *testing.T) {
		s := setup(t)
		for i := range 5 {
			if res := fail(t, s, "", 0, i); res.Procedure.Demoted {
				t.Fatalf("failure %d demoted with demote-after 0", i+1)
			}
		}
		exposed(t, s, 1, "five failures, never demoting")
	})

	t.Run("a bad setting is refused and changes nothing", func(t *testing.T) {
		s := setup(t)
		for _, after := range []int{-1, procedures.MaxDemoteAfter + 1} {
			in := run(name, "", "bad", procedures.FailureToolError, time.Millisecond, At(5))
			in.DemoteAfter = after
			_, err := s.RecordUse(ctx, in)
			RequireCode(t, err, fault.CodeInvalid)
		}
		if h := MustGet(t, s, name).Health; h.Runs != 0 {
			t.Errorf("refused runs counted: %d runs", h.Runs)
		}
	})

	t.Run("a dump and a merge keep it", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, Real(sigAB, "v1", "k1", At(0))) // a dump checks code hashes
		for i := range 3 {
			fail(t, s, "", 3, i)
		}
		data := MustDump(t, s, "src")
		imported := newStore(t)
		MustImport(t, imported, data, 100)
		if !MustGet(t, imported, name).Demoted {
			t.Error("imported: the demotion was lost")
		}
		if _, total := MustFind(t, imported, exposedOnly); total != 0 {
			t.Errorf("imported: %d exposed, want 0", total)
		}
		merged := newStore(t)
		MustMerge(t, merged, data, 100)
		if !MustGet(t, merged, name).Demoted {
			t.Error("merged into an empty store: the demotion was lost")
		}
	})

	t.Run("16 concurrent runners demote it once", func(t *testing.T) {
		s := setup(t)
		const runners = 16
		var wg sync.WaitGroup
		var mu sync.Mutex
		demotions := 0
		errs := make(chan error, runners)
		for r := range runners {
			wg.Go(func() {
				in := run(name, "", fmt.Sprintf("c%d", r), procedures.FailureTimeout, time.Millisecond, At(40+r))
				in.DemoteAfter = 3
				res, err := s.RecordUse(ctx, in)
				if err != nil {
					errs <- err
					return
				}
				if res.Demotion == procedures.DemotionDemoted {
					mu.Lock()
					demotions++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("RecordUse: %v", err)
		}
		if demotions != 1 || !MustGet(t, s, name).Demoted {
			t.Errorf("%d runs reported the demotion, want exactly 1", demotions)
		}
		exposed(t, s, 0, "demoted by concurrent runners")
	})
}

// mustExposedPair is a new store whose catalogue has tool_a and tool_b,
// both read-only, holding one procedure calling them (version h1): one
// that is exposed.
func mustExposedPair(t *testing.T, newStore NewStore) procedures.Store {
	t.Helper()
	s := newStore(t)
	cat, err := procedures.NewCatalogue([]procedures.Tool{{Name: "tool_a", ReadOnly: true}, {Name: "tool_b", ReadOnly: true}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutCatalogue(ctx, cat); err != nil {
		t.Fatal(err)
	}
	MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
	return s
}
