package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
)

// testDemotion: runs of the current version demote a procedure in the
// store (docs/design.md "Health of each version",
// health.DemotedAfter): demoted at the --demote-after'th failure that
// counts toward demotion since the last success, once they came from two
// callers, in the same write, its Class then leaving Find's exposed
// filter and totals; one caller's failures never demote, outages and
// timeouts neither advance nor end the streak; no run lifts it,
// LiftDemotion and a promote do; runs of other versions change nothing;
// 0 never demotes; the demotion and the streak survive a dump and a
// merge; 16 concurrent runners demote it once.
func testDemotion(t *testing.T, newStore NewStore) {
	name := NameOf(sigAB...)
	exposedOnly := procedures.Query{Exposed: ptr(true)}
	setup := func(t *testing.T) procedures.Store { return mustExposedPair(t, newStore) }
	// failAs is a failure of class by caller; fail one of tool_error by
	// callers a and b in turn.
	failAs := func(t *testing.T, s procedures.Store, hash string, after, n int, class, caller string) procedures.UseResult {
		t.Helper()
		in := run(name, hash, fmt.Sprintf("f%d", n), class, time.Millisecond, At(10+n))
		in.DemoteAfter, in.Run.Caller = after, caller
		return MustRecordUse(t, s, in)
	}
	fail := func(t *testing.T, s procedures.Store, hash string, after, n int) procedures.UseResult {
		t.Helper()
		return failAs(t, s, hash, after, n, health.FailureToolError, []string{"a", "b"}[n%2])
	}
	succeed := func(t *testing.T, s procedures.Store, hash string, after, n int) procedures.UseResult {
		t.Helper()
		in := run(name, hash, fmt.Sprintf("s%d", n), "", time.Millisecond, At(10+n))
		in.DemoteAfter, in.Run.Caller = after, "a"
		return MustRecordUse(t, s, in)
	}
	exposed := func(t *testing.T, s procedures.Store, want int, when string) {
		t.Helper()
		if ps, total := MustFind(t, s, exposedOnly); total != want || len(ps) != want {
			t.Errorf("%s: exposed %v (total %d), want %d", when, names(ps), total, want)
		}
	}
	lift := func(t *testing.T, s procedures.Store, in procedures.LiftInput, n int) (*procedures.Procedure, error) {
		t.Helper()
		in.Name = name
		in.Decision = Decision(audit.KindHealth, name, "h1", At(100+n))
		return s.LiftDemotion(ctx, in)
	}

	t.Run("the third failure of two callers demotes, a success does not lift", func(t *testing.T) {
		s := setup(t)
		for i := range 2 {
			if res := fail(t, s, "", 3, i); res.Demotion != health.DemotionNone || res.Procedure.Demoted {
				t.Fatalf("failure %d: demotion %q, demoted %v; want none before the third", i+1, res.Demotion, res.Procedure.Demoted)
			}
		}
		exposed(t, s, 1, "after two failures")
		res := fail(t, s, "", 3, 2)
		if res.Demotion != health.DemotionDemoted || !res.Procedure.Demoted || !MustGet(t, s, name).Demoted {
			t.Fatalf("third failure: demotion %q, demoted %v; want demoted", res.Demotion, res.Procedure.Demoted)
		}
		exposed(t, s, 0, "demoted")
		if ps, total := MustFind(t, s, procedures.Query{}); total != 1 || len(ps) != 1 || !ps[0].Demoted {
			t.Errorf("demoted: unfiltered Find = %d (total %d), want it listed as demoted", len(ps), total)
		}
		if res := fail(t, s, "", 3, 3); res.Demotion != health.DemotionNone || !res.Procedure.Demoted {
			t.Errorf("a fourth failure: demotion %q, demoted %v; want it to stay demoted, reported once", res.Demotion, res.Procedure.Demoted)
		}
		res = succeed(t, s, "", 3, 4)
		if res.Demotion != health.DemotionNone || !res.Procedure.Demoted || !MustGet(t, s, name).Demoted {
			t.Fatalf("a success: demotion %q, demoted %v; want it still demoted", res.Demotion, res.Procedure.Demoted)
		}
		exposed(t, s, 0, "demoted, after a success")
	})

	t.Run("one caller's failures never demote", func(t *testing.T) {
		s := setup(t)
		for i := range 6 {
			if res := failAs(t, s, "", 3, i, []string{health.FailureToolError, health.FailureToolRefused, health.FailureInternal,
				health.FailureStepLimit, health.FailureMemoryLimit, health.FailureResultTooLarge}[i], "mallory"); res.Procedure.Demoted {
				t.Fatalf("failure %d of one caller demoted", i+1)
			}
		}
		if h := MustGet(t, s, name).Health; h.DemotionStreak != 6 || h.StreakCallerCount() != 1 {
			t.Fatalf("streak %d by %d callers, want 6 by 1", h.DemotionStreak, h.StreakCallerCount())
		}
		if res := failAs(t, s, "", 3, 6, health.FailureToolError, "another"); !res.Procedure.Demoted {
			t.Fatal("a second caller's failure did not demote")
		}
	})

	t.Run("outages and timeouts neither advance nor end the streak", func(t *testing.T) {
		s := setup(t)
		n := 0
		for range 3 {
			for _, c := range []string{"a", "b"} {
				for _, class := range []string{health.FailureUpstreamUnavailable, health.FailureTimeout} {
					if res := failAs(t, s, "", 3, n, class, c); res.Procedure.Demoted {
						t.Fatalf("%s demoted", class)
					}
					n++
				}
			}
		}
		failAs(t, s, "", 3, n, health.FailureToolError, "a")
		failAs(t, s, "", 3, n+1, health.FailureUpstreamUnavailable, "a")
		failAs(t, s, "", 3, n+2, health.FailureToolError, "b")
		if h := MustGet(t, s, name).Health; h.DemotionStreak != 2 || h.ConsecutiveFailures != int64(n+3) {
			t.Fatalf("streak %d, consecutive %d; want 2, %d", h.DemotionStreak, h.ConsecutiveFailures, n+3)
		}
		if res := failAs(t, s, "", 3, n+3, health.FailureTimeout, "b"); res.Procedure.Demoted {
			t.Fatal("a timeout completed the streak")
		}
		if res := failAs(t, s, "", 3, n+4, health.FailureToolRefused, "b"); !res.Procedure.Demoted {
			t.Fatal("the third counted failure, an outage between them, did not demote")
		}
	})

	t.Run("LiftDemotion lifts, starts the streak again and records", func(t *testing.T) {
		s := setup(t)
		_, err := lift(t, s, procedures.LiftInput{}, 0)
		RequireCode(t, err, fault.CodeConflict)
		for i := range 3 {
			fail(t, s, "", 3, i)
		}
		cat, err := s.Catalogue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rev := cat.Revision
		for _, in := range []procedures.LiftInput{{CodeHash: "h2"}, {Revision: "another"}, {CodeHash: "h1", Revision: "another"}} {
			_, err := lift(t, s, in, 1)
			RequireCode(t, err, fault.CodeConflict)
		}
		if !MustGet(t, s, name).Demoted {
			t.Fatal("a refused lifting lifted")
		}
		if ds := MustDecisions(t, s, audit.DecisionFilter{Procedure: name}); len(ds) != 0 {
			t.Fatalf("refused liftings recorded %+v", ds)
		}
		p, err := lift(t, s, procedures.LiftInput{CodeHash: "h1", Revision: rev}, 2)
		if err != nil || p.Demoted || MustGet(t, s, name).Demoted {
			t.Fatalf("lifting: %+v, %v", p, err)
		}
		if h := p.Health; h.DemotionStreak != 0 || h.StreakCallerCount() != 0 || h.Runs != 3 || h.ConsecutiveFailures != 3 {
			t.Errorf("after lifting: health %+v; want the streak from 0, the rest kept", h)
		}
		exposed(t, s, 1, "lifted")
		if ds := MustDecisions(t, s, audit.DecisionFilter{Procedure: name}); len(ds) != 1 || ds[0].Kind != audit.KindHealth {
			t.Fatalf("lifting recorded %+v", ds)
		}
		for i := range 2 {
			if fail(t, s, "", 3, 10+i).Procedure.Demoted {
				t.Fatalf("failure %d after lifting demoted: the streak did not start again", i+1)
			}
		}
		if !fail(t, s, "", 3, 12).Procedure.Demoted {
			t.Fatal("the third failure after lifting did not demote")
		}
		if p, err := lift(t, s, procedures.LiftInput{}, 3); err != nil || p.Demoted {
			t.Fatalf("lifting without a version or revision: %+v, %v", p, err)
		}
		_, err = s.LiftDemotion(ctx, procedures.LiftInput{Name: "proc__missing", Decision: Decision(audit.KindHealth, "proc__missing", "h1", At(120))})
		RequireCode(t, err, fault.CodeNotFound)
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
		if res := succeed(t, s, "h2", 3, 20); res.Demotion != health.DemotionNone || !res.Procedure.Demoted {
			t.Errorf("a success of h2 changed the demotion of h1 (demotion %q)", res.Demotion)
		}
	})

	t.Run("a promote lifts it", func(t *testing.T) {
		s := setup(t)
		MustCapture(t, s, In(sigAB, "h2", "k2", At(1)))
		for i := range 3 {
			fail(t, s, "", 3, i)
		}
		exposed(t, s, 0, "demoted")
		p, err := s.Promote(ctx, name, "h2", Decision(audit.KindPromote, name, "h2", At(30)))
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
		for _, after := range []int{-1, health.MaxDemoteAfter + 1} {
			in := run(name, "", "bad", health.FailureToolError, time.Millisecond, At(5))
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
		failAs(t, s, "", 3, 3, health.FailureToolError, "c")
		want := MustGet(t, s, name).Health
		data := MustDump(t, s, "src")
		imported := newStore(t)
		MustImport(t, imported, data, 100)
		got := MustGet(t, imported, name)
		if !got.Demoted {
			t.Error("imported: the demotion was lost")
		}
		if got.Health.DemotionStreak != want.DemotionStreak || got.Health.StreakCallers != want.StreakCallers || want.DemotionStreak != 4 {
			t.Errorf("imported: streak %d %v, want %d %v", got.Health.DemotionStreak, got.Health.StreakCallers, want.DemotionStreak, want.StreakCallers)
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
				in := run(name, "", fmt.Sprintf("c%d", r), health.FailureToolError, time.Millisecond, At(40+r))
				in.DemoteAfter, in.Run.Caller = 3, fmt.Sprintf("caller%d", r)
				res, err := s.RecordUse(ctx, in)
				if err != nil {
					errs <- err
					return
				}
				if res.Demotion == health.DemotionDemoted {
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
