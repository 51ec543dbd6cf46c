package storetest

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
)

func testDecisions(t *testing.T, newStore NewStore) {
	t.Run("newest first by time then id", func(t *testing.T) {
		s := newStore(t)
		mk := func(id string, at time.Time) audit.Decision {
			d := Decision(audit.KindInvoke, "proc__a", "h", at)
			d.ID = id
			return d
		}
		in := []audit.Decision{
			mk("pgd_b", At(1)), mk("pgd_z", At(0)), mk("pgd_a", At(1)), mk("pgd_c", At(2)), mk("pgd_y", At(1).Add(200*time.Microsecond)),
		}
		for _, d := range in {
			if err := s.AppendDecision(ctx, d); err != nil {
				t.Fatalf("AppendDecision: %v", err)
			}
		}
		var got []string
		for _, d := range MustDecisions(t, s, audit.DecisionFilter{}) {
			got = append(got, d.ID)
		}
		// pgd_y is within the same millisecond as pgd_a and pgd_b.
		requireEqual(t, "order", got, []string{"pgd_c", "pgd_y", "pgd_b", "pgd_a", "pgd_z"})
	})

	t.Run("pages back with before", func(t *testing.T) {
		s := newStore(t)
		// Two procedures, several records in the same millisecond.
		for i := 0; i < 11; i++ {
			proc := "proc__a"
			if i%3 == 0 {
				proc = "proc__b"
			}
			d := Decision(audit.KindInvoke, proc, "h", At(i/4))
			if err := s.AppendDecision(ctx, d); err != nil {
				t.Fatalf("AppendDecision: %v", err)
			}
		}
		for _, proc := range []string{"", "proc__a", "proc__b"} {
			var want, got []string
			for _, d := range MustDecisions(t, s, audit.DecisionFilter{Procedure: proc}) {
				want = append(want, d.ID)
			}
			before := ""
			for {
				page := MustDecisions(t, s, audit.DecisionFilter{Procedure: proc, Limit: 3, Before: before})
				if len(page) == 0 {
					break
				}
				for _, d := range page {
					got = append(got, d.ID)
				}
				before = page[len(page)-1].ID
				if len(got) > len(want) {
					break
				}
			}
			requireEqual(t, "pages of "+proc, got, want)
		}
		_, err := s.ListDecisions(ctx, audit.DecisionFilter{Before: "pgd_nope"})
		RequireCode(t, err, fault.CodeInvalid)
	})

	t.Run("fields round trip", func(t *testing.T) {
		s := newStore(t)
		d := audit.Decision{
			ID: audit.NewDecisionID(At(0)), Kind: audit.KindInvoke, Procedure: "proc__a__b", CodeHash: "h1",
			Phase: audit.PhaseInteractive, Outcome: audit.Denied, Reason: audit.ReasonReviewRequired,
			Actor: "agent-7", AllowedTools: []string{"a", "b"}, At: At(0), Note: "note", Suggestion: "ask",
		}
		if err := s.AppendDecision(ctx, d); err != nil {
			t.Fatalf("AppendDecision: %v", err)
		}
		ds := MustDecisions(t, s, audit.DecisionFilter{})
		if len(ds) != 1 {
			t.Fatalf("decisions = %+v", ds)
		}
		RequireTime(t, "At", ds[0].At, d.At)
		got := ds[0]
		got.At, d.At = time.Time{}, time.Time{}
		requireEqual(t, "decision", got, d)
	})

	t.Run("the run's result beside the record", func(t *testing.T) {
		// An allowed decision gets the result of the run it allowed once
		// (again the same is a retry; another one a conflict), listed
		// with the record; an unknown id is not found, a value no result.
		s := newStore(t)
		d := Decision(audit.KindInvoke, "proc__a", "h", At(0))
		other := Decision(audit.KindTurn, "proc__a", "h", At(1))
		for _, x := range []audit.Decision{d, other} {
			if err := s.AppendDecision(ctx, x); err != nil {
				t.Fatalf("AppendDecision: %v", err)
			}
		}
		for range 2 {
			if err := s.SetDecisionResult(ctx, d.ID, health.FailureInvalidArguments); err != nil {
				t.Fatalf("SetDecisionResult: %v", err)
			}
		}
		RequireCode(t, s.SetDecisionResult(ctx, d.ID, health.ResultSucceeded), fault.CodeConflict)
		RequireCode(t, s.SetDecisionResult(ctx, audit.NewDecisionID(At(2)), health.ResultSucceeded), fault.CodeNotFound)
		RequireCode(t, s.SetDecisionResult(ctx, other.ID, "task_id=99999"), fault.CodeInvalid)
		got := map[string]string{}
		for _, x := range MustDecisions(t, s, audit.DecisionFilter{}) {
			got[x.ID] = x.Result
		}
		requireEqual(t, "results", got, map[string]string{d.ID: health.FailureInvalidArguments, other.ID: ""})
		// The record itself is as it was appended.
		ds := MustDecisions(t, s, audit.DecisionFilter{Kind: audit.KindInvoke})
		if len(ds) != 1 {
			t.Fatalf("decisions %+v", ds)
		}
		want := d
		want.Result = health.FailureInvalidArguments
		RequireTime(t, "At", ds[0].At, want.At)
		ds[0].At, want.At = time.Time{}, time.Time{}
		requireEqual(t, "decision", ds[0], want)
	})

	t.Run("filters by procedure and kind", func(t *testing.T) {
		s := newStore(t)
		for i, c := range []struct {
			proc string
			kind audit.DecisionKind
		}{
			{"proc__a", audit.KindInvoke}, {"proc__a", audit.KindGrant}, {"proc__b", audit.KindInvoke},
			{"proc__a", audit.KindInvoke}, {"proc__b", audit.KindPromote}, {"proc__ab", audit.KindInvoke},
		} {
			if err := s.AppendDecision(ctx, Decision(c.kind, c.proc, "h", At(i))); err != nil {
				t.Fatalf("AppendDecision: %v", err)
			}
		}
		cases := []struct {
			f    audit.DecisionFilter
			want []string // "proc kind", newest first
		}{
			{audit.DecisionFilter{Procedure: "proc__a"}, []string{"proc__a invoke", "proc__a grant", "proc__a invoke"}},
			{audit.DecisionFilter{Kind: audit.KindInvoke}, []string{"proc__ab invoke", "proc__a invoke", "proc__b invoke", "proc__a invoke"}},
			{audit.DecisionFilter{Procedure: "proc__b", Kind: audit.KindPromote}, []string{"proc__b promote"}},
			{audit.DecisionFilter{Procedure: "proc__missing"}, nil},
			{audit.DecisionFilter{Limit: 2}, []string{"proc__ab invoke", "proc__b promote"}},
			{audit.DecisionFilter{Procedure: "proc__a", Limit: 1}, []string{"proc__a invoke"}},
		}
		for _, c := range cases {
			var got []string
			for _, d := range MustDecisions(t, s, c.f) {
				got = append(got, fmt.Sprintf("%s %s", d.Procedure, d.Kind))
			}
			requireEqual(t, fmt.Sprintf("%+v", c.f), got, c.want)
		}
	})

	t.Run("limit defaults to 100", func(t *testing.T) {
		s := newStore(t)
		for i := 0; i < 105; i++ {
			if err := s.AppendDecision(ctx, Decision(audit.KindInvoke, "proc__a", "h", At(i))); err != nil {
				t.Fatalf("AppendDecision: %v", err)
			}
		}
		if ds := MustDecisions(t, s, audit.DecisionFilter{}); len(ds) != 100 {
			t.Errorf("default limit returned %d", len(ds))
		}
		if ds := MustDecisions(t, s, audit.DecisionFilter{Limit: 5000}); len(ds) != 105 {
			t.Errorf("limit 5000 returned %d", len(ds))
		}
	})

	t.Run("invalid record is rejected", func(t *testing.T) {
		s := newStore(t)
		for name, mutate := range map[string]func(*audit.Decision){
			"no id":        func(d *audit.Decision) { d.ID = "" },
			"no kind":      func(d *audit.Decision) { d.Kind = "" },
			"unknown kind": func(d *audit.Decision) { d.Kind = "launch" },
			"no time":      func(d *audit.Decision) { d.At = time.Time{} },
		} {
			d := Decision(audit.KindInvoke, "proc__a", "h", At(0))
			mutate(&d)
			err := s.AppendDecision(ctx, d)
			if fault.ErrorCode(err) != fault.CodeInvalid {
				t.Errorf("%s: error %v, want %s", name, err, fault.CodeInvalid)
			}
		}
		_, err := s.ListDecisions(ctx, audit.DecisionFilter{Limit: -1})
		RequireCode(t, err, fault.CodeInvalid)
		if ds := MustDecisions(t, s, audit.DecisionFilter{}); len(ds) != 0 {
			t.Errorf("invalid records were stored: %+v", ds)
		}
	})

	t.Run("duplicate id is a conflict", func(t *testing.T) {
		s := newStore(t)
		d := Decision(audit.KindInvoke, "proc__a", "h", At(0))
		if err := s.AppendDecision(ctx, d); err != nil {
			t.Fatalf("AppendDecision: %v", err)
		}
		// The same record again (a retried write) changes nothing.
		if err := s.AppendDecision(ctx, d); err != nil {
			t.Fatalf("appending the same record again: %v", err)
		}
		d.At = At(1)
		RequireCode(t, s.AppendDecision(ctx, d), fault.CodeConflict)
		if ds := MustDecisions(t, s, audit.DecisionFilter{}); len(ds) != 1 {
			t.Errorf("decisions = %+v", ds)
		}
	})
}

// decisionFilterCases are filters over every field, alone and together,
// that testDecisionFilters checks against DecisionFilter.Match.
// The times are at a store's precision, as Service.Decisions gives them.
func decisionFilterCases() []audit.DecisionFilter {
	return []audit.DecisionFilter{
		{},
		{Actor: "alice"},
		{Actor: "nobody"},
		{Outcome: audit.Denied},
		{Kind: audit.KindTurn},
		{Kind: audit.KindTurn, Outcome: audit.Denied},
		{Kind: audit.KindGrant, Outcome: audit.Allowed, Actor: "bob"},
		{Procedure: "proc__a", Outcome: audit.Denied},
		{Procedure: "proc__b", Actor: "alice", Kind: audit.KindInvoke},
		{Since: Ms(At(10))},
		{Until: Ms(At(20))},
		{Since: Ms(At(10)), Until: Ms(At(30)), Outcome: audit.Allowed},
		{Since: Ms(At(5)), Until: Ms(At(50)), Actor: "bob", Kind: audit.KindTurn},
		{Since: Ms(At(12)), Until: Ms(At(13)), Procedure: "proc__a"},
		{Since: Ms(At(100))},
	}
}

// testDecisionFilters: every filter (actor, outcome, kind, procedure, the
// time range, and any of them together) lists exactly the records
// DecisionFilter.Match selects, newest first, paged back with before; a
// pruned record leaves every filtered list.
func testDecisionFilters(t *testing.T, newStore NewStore) {
	s := newStore(t)
	actors := []string{"alice", "bob", "procgraph", ""}
	kinds := []audit.DecisionKind{audit.KindInvoke, audit.KindTurn, audit.KindGrant, audit.KindApproval}
	procs := []string{"proc__a", "proc__b", ""}
	var all []audit.Decision
	for i := 0; i < 90; i++ {
		d := Decision(kinds[i%4], procs[i%3], "h", At(i/2))
		d.Actor = actors[(i/3)%4]
		if i%5 == 0 || i%7 == 0 {
			d.Outcome = audit.Denied
		}
		if err := s.AppendDecision(ctx, d); err != nil {
			t.Fatalf("AppendDecision: %v", err)
		}
		d.At = Ms(d.At)
		all = append(all, d)
	}
	newestFirst := func(ds []audit.Decision) []string {
		ds = append([]audit.Decision(nil), ds...)
		sort.Slice(ds, func(i, j int) bool {
			if !ds[i].At.Equal(ds[j].At) {
				return ds[i].At.After(ds[j].At)
			}
			return ds[i].ID > ds[j].ID
		})
		var ids []string
		for _, d := range ds {
			ids = append(ids, d.ID)
		}
		return ids
	}
	check := func(f audit.DecisionFilter, within []audit.Decision) {
		t.Helper()
		var want []audit.Decision
		for _, d := range within {
			if f.Match(d) {
				want = append(want, d)
			}
		}
		var got []string
		for _, d := range MustDecisions(t, s, f) {
			got = append(got, d.ID)
		}
		requireEqual(t, fmt.Sprintf("%+v", f), got, newestFirst(want))
		// Paged back three at a time, the same records.
		var paged []string
		f.Limit = 3
		for {
			page := MustDecisions(t, s, f)
			for _, d := range page {
				paged = append(paged, d.ID)
			}
			if len(page) < 3 || len(paged) > len(want) {
				break
			}
			f.Before = page[len(page)-1].ID
		}
		requireEqual(t, fmt.Sprintf("paged %+v", f), paged, newestFirst(want))
	}
	for _, f := range decisionFilterCases() {
		check(f, all)
	}
	p, ok := s.(procedures.AuditPruner)
	if !ok {
		return
	}
	if _, err := p.PruneDecisions(ctx, Ms(At(20))); err != nil {
		t.Fatalf("PruneDecisions: %v", err)
	}
	var left []audit.Decision
	for _, d := range all {
		if !d.At.Before(Ms(At(20))) {
			left = append(left, d)
		}
	}
	for _, f := range decisionFilterCases() {
		check(f, left)
	}
}
