package storetest

import (
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
)

// testRecordRun: what a run left (procedures.RunRecord) is one
// transaction (docs/design.md "One commit per run"): its records with
// their results, the results of records stored before, its uses — a use
// of an unknown procedure writing nothing — or nothing at all.
func testRecordRun(t *testing.T, newStore NewStore) {
	name := NameOf(sigAB...)

	t.Run("records results and uses in one write", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		before := Decision(audit.KindTurn, name, "h1", At(1))
		if err := s.AppendDecision(ctx, before); err != nil {
			t.Fatal(err)
		}
		with := Decision(audit.KindInvoke, name, "h1", At(2))
		with.Result = health.ResultSucceeded
		run := &health.Run{At: At(3)}
		rr := procedures.RunRecord{
			Decisions: []audit.Decision{with},
			Results:   []procedures.DecisionResult{{ID: before.ID, Result: health.FailureToolError}},
			Uses: []procedures.UseInput{
				{Name: "proc__missing", UsageKey: "k2", At: At(3), Run: run},
				{Name: name, UsageKey: "k2", Replay: true, At: At(3), Run: run},
			},
		}
		res, err := s.RecordRun(ctx, rr)
		if err != nil {
			t.Fatalf("RecordRun: %v", err)
		}
		if len(res) != 2 || res[0].Procedure != nil || res[1].Procedure == nil || res[1].Procedure.Name != name {
			t.Fatalf("use results %+v", res)
		}
		// Its records and results again are a retry: they stay as they are.
		rr.Uses = nil
		if _, err := s.RecordRun(ctx, rr); err != nil {
			t.Fatalf("RecordRun again: %v", err)
		}
		got := map[string]string{}
		for _, d := range MustDecisions(t, s, audit.DecisionFilter{}) {
			got[d.ID] = d.Result
		}
		requireEqual(t, "results", got, map[string]string{before.ID: health.FailureToolError, with.ID: health.ResultSucceeded})
		if p := MustGet(t, s, name); p.UseCount != 1 || p.Frequency != 2 || p.Health.Runs != 1 {
			t.Fatalf("use count %d frequency %d health %+v, want 1 2 one run", p.UseCount, p.Frequency, p.Health)
		}
	})

	t.Run("a refused part writes nothing", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		stored := Decision(audit.KindInvoke, name, "h1", At(1))
		if err := s.AppendDecision(ctx, stored); err != nil {
			t.Fatal(err)
		}
		if err := s.SetDecisionResult(ctx, stored.ID, health.ResultSucceeded); err != nil {
			t.Fatal(err)
		}
		with := Decision(audit.KindInvoke, name, "h1", At(2))
		with.Result = health.ResultSucceeded
		use := procedures.UseInput{Name: name, UsageKey: "k2", Replay: true, At: At(3), Run: &health.Run{At: At(3)}}
		for _, c := range []struct {
			name string
			rr   procedures.RunRecord
			code fault.Code
		}{
			{"another result", procedures.RunRecord{Decisions: []audit.Decision{with}, Uses: []procedures.UseInput{use},
				Results: []procedures.DecisionResult{{ID: stored.ID, Result: health.FailureToolError}}}, fault.CodeConflict},
			{"an unknown record", procedures.RunRecord{Decisions: []audit.Decision{with}, Uses: []procedures.UseInput{use},
				Results: []procedures.DecisionResult{{ID: audit.NewDecisionID(At(4)), Result: health.ResultSucceeded}}}, fault.CodeNotFound},
			{"a value for a result", procedures.RunRecord{Decisions: []audit.Decision{with}, Uses: []procedures.UseInput{use},
				Results: []procedures.DecisionResult{{ID: stored.ID, Result: "task_id=7"}}}, fault.CodeInvalid},
		} {
			t.Run(c.name, func(t *testing.T) {
				_, err := s.RecordRun(ctx, c.rr)
				RequireCode(t, err, c.code)
				if ds := MustDecisions(t, s, audit.DecisionFilter{}); len(ds) != 1 || ds[0].Result != health.ResultSucceeded {
					t.Fatalf("records %+v, want the one stored before", ds)
				}
				if p := MustGet(t, s, name); p.UseCount != 0 || p.Health.Runs != 0 {
					t.Fatalf("use count %d health %+v: the use was written", p.UseCount, p.Health)
				}
			})
		}
	})

	t.Run("a turn's finish and its run are one write", func(t *testing.T) {
		// FinishTurn marks a running turn done with what its run left; a
		// turn no longer running (ended as lost) keeps its ending, and the
		// run is committed all the same; a refused run writes neither.
		for _, c := range []struct {
			name    string
			from    gate.TurnStatus // the stored status when the run ends
			result  string          // the result set on the claim's record
			done    bool
			code    fault.Code
			want    gate.TurnStatus
			results string
		}{
			{"running", gate.TurnRunning, health.ResultSucceeded, true, "", gate.TurnSucceeded, health.ResultSucceeded},
			{"ended as lost", gate.TurnFailed, health.ResultSucceeded, false, "", gate.TurnFailed, health.ResultSucceeded},
			{"a value for a result", gate.TurnRunning, "id=secret-42", false, fault.CodeInvalid, gate.TurnRunning, ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				s := newStore(t)
				ts := turnStore(t, s)
				r := PendingTurn("s1", At(0), time.Minute)
				MustCreateApproval(t, ts, r, 4, At(0))
				claim := Decision(audit.KindTurn, "proc__kill_job", r.CodeHash, At(1))
				prev := gate.TurnPending
				for _, st := range []gate.TurnStatus{gate.TurnApproved, gate.TurnRunning, c.from} {
					if st == prev {
						continue
					}
					next := r
					next.Status = st
					var ds []audit.Decision
					if st == gate.TurnRunning {
						ds = append(ds, claim)
					}
					if _, err := ts.TransitionTurn(ctx, next, []gate.TurnStatus{prev}, false, At(2), ds...); err != nil {
						t.Fatalf("to %s: %v", st, err)
					}
					prev = st
				}
				done := r
				done.Status = gate.TurnSucceeded
				got, finished, _, err := ts.FinishTurn(ctx, done, At(3),
					procedures.RunRecord{Results: []procedures.DecisionResult{{ID: claim.ID, Result: c.result}}})
				if c.code != "" {
					RequireCode(t, err, c.code)
				} else if err != nil || finished != c.done || got.Status != c.want {
					t.Fatalf("FinishTurn: %+v, done %v, %v; want %s, done %v", got, finished, err, c.want, c.done)
				}
				if cur, err := ts.GetApproval(ctx, r.ID); err != nil || cur.Status != c.want {
					t.Fatalf("stored %+v, %v; want %s", cur, err, c.want)
				}
				ds := MustDecisions(t, s, audit.DecisionFilter{})
				if len(ds) != 1 || ds[0].Result != c.results {
					t.Fatalf("records %+v, want the claim's with result %q", ds, c.results)
				}
			})
		}
	})
}
