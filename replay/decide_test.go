package replay_test

import (
	"slices"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/decide"
	"github.com/procgraph/procgraph/replay"

	"github.com/procgraph/procgraph/procedures"
)

func TestDecideTable(t *testing.T) {
	const (
		auto  = audit.PhaseAutomatic
		inter = audit.PhaseInteractive
	)
	cases := []struct {
		name          string
		in            decide.DecisionInput
		outcome       audit.Outcome
		reason        string
		stateChanging bool
		suggestion    bool
	}{
		{"not succeeded, read-only, automatic", decide.DecisionInput{Phase: auto, ReadOnly: true}, audit.Denied, audit.ReasonProcedureNotSucceeded, false, false},
		{"not succeeded beats a grant and a review", decide.DecisionInput{Phase: inter, AllowMutating: true, GrantActive: true, ReviewedBy: "op", ReviewerHasGrantScope: true}, audit.Denied, audit.ReasonProcedureNotSucceeded, false, false},
		{"automatic, read-only", decide.DecisionInput{Phase: auto, Succeeded: true, ReadOnly: true}, audit.Allowed, audit.ReasonReadOnly, false, false},
		{"automatic, state-changing", decide.DecisionInput{Phase: auto, Succeeded: true}, audit.Denied, audit.ReasonStateChangingAuto, false, true},
		{"automatic, state-changing, everything on", decide.DecisionInput{Phase: auto, Succeeded: true, AllowMutating: true, GrantActive: true, ReviewedBy: "op", ReviewerHasGrantScope: true}, audit.Denied, audit.ReasonStateChangingAuto, false, true},
		{"unknown phase is automatic", decide.DecisionInput{Phase: "yolo", Succeeded: true, AllowMutating: true, GrantActive: true}, audit.Denied, audit.ReasonStateChangingAuto, false, true},
		{"interactive, read-only", decide.DecisionInput{Phase: inter, Succeeded: true, ReadOnly: true}, audit.Allowed, audit.ReasonReadOnly, false, false},
		{"interactive, state-changing, mutating off", decide.DecisionInput{Phase: inter, Succeeded: true, GrantActive: true, ReviewedBy: "op", ReviewerHasGrantScope: true}, audit.Denied, audit.ReasonStateChangingDisabled, false, false},
		{"interactive, state-changing, on, active grant", decide.DecisionInput{Phase: inter, Succeeded: true, AllowMutating: true, GrantActive: true}, audit.Allowed, audit.ReasonDurableAutoRun, true, false},
		{"interactive, state-changing, on, reviewed by grant scope", decide.DecisionInput{Phase: inter, Succeeded: true, AllowMutating: true, ReviewedBy: "op", ReviewerHasGrantScope: true}, audit.Allowed, audit.ReasonOperatorReviewed, true, false},
		{"interactive, state-changing, on, reviewed without grant scope", decide.DecisionInput{Phase: inter, Succeeded: true, AllowMutating: true, ReviewedBy: "op"}, audit.Denied, audit.ReasonReviewRequired, false, false},
		{"interactive, state-changing, on, grant scope without reviewer", decide.DecisionInput{Phase: inter, Succeeded: true, AllowMutating: true, ReviewerHasGrantScope: true}, audit.Denied, audit.ReasonReviewRequired, false, false},
		{"interactive, state-changing, on, otherwise", decide.DecisionInput{Phase: inter, Succeeded: true, AllowMutating: true}, audit.Denied, audit.ReasonReviewRequired, false, false},
		{"nesting too deep, automatic", decide.DecisionInput{Phase: auto, Succeeded: true, Problem: audit.ReasonNestingTooDeep}, audit.Denied, audit.ReasonNestingTooDeep, false, false},
		{"nesting too deep beats a grant and a review", decide.DecisionInput{Phase: inter, Succeeded: true, Problem: audit.ReasonNestingTooDeep, AllowMutating: true, GrantActive: true, ReviewedBy: "op", ReviewerHasGrantScope: true}, audit.Denied, audit.ReasonNestingTooDeep, false, false},
		{"cycle, interactive", decide.DecisionInput{Phase: inter, Succeeded: true, Problem: audit.ReasonCycle, AllowMutating: true, GrantActive: true}, audit.Denied, audit.ReasonCycle, false, false},
		{"retired, read-only, automatic", decide.DecisionInput{Phase: auto, Retired: true, Succeeded: true, ReadOnly: true}, audit.Denied, audit.ReasonRetired, false, true},
		{"retired beats everything", decide.DecisionInput{Phase: inter, Retired: true, Succeeded: true, AllowMutating: true, GrantActive: true, ReviewedBy: "op", ReviewerHasGrantScope: true}, audit.Denied, audit.ReasonRetired, false, true},
		{"retired and not succeeded", decide.DecisionInput{Phase: auto, Retired: true, ReadOnly: true}, audit.Denied, audit.ReasonRetired, false, true},
		{"demoted, read-only, automatic", decide.DecisionInput{Phase: auto, Demoted: true, Succeeded: true, ReadOnly: true}, audit.Denied, audit.ReasonDemoted, false, true},
		{"demoted, unknown phase is automatic", decide.DecisionInput{Phase: "x", Demoted: true, Succeeded: true, ReadOnly: true}, audit.Denied, audit.ReasonDemoted, false, true},
		{"demoted, read-only, interactive still runs", decide.DecisionInput{Phase: inter, Demoted: true, Succeeded: true, ReadOnly: true}, audit.Allowed, audit.ReasonReadOnly, false, false},
		{"demoted, state-changing, interactive, reviewed", decide.DecisionInput{Phase: inter, Demoted: true, Succeeded: true, AllowMutating: true, ReviewedBy: "op", ReviewerHasGrantScope: true}, audit.Allowed, audit.ReasonOperatorReviewed, true, false},
		{"demoted, retired wins", decide.DecisionInput{Phase: auto, Retired: true, Demoted: true, Succeeded: true, ReadOnly: true}, audit.Denied, audit.ReasonRetired, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := decide.Decide(c.in)
			if v.Outcome != c.outcome || v.Reason != c.reason || v.StateChanging != c.stateChanging {
				t.Fatalf("Decide = %+v, want %s %s stateChanging=%v", v, c.outcome, c.reason, c.stateChanging)
			}
			if (v.Suggestion != "") != c.suggestion {
				t.Fatalf("suggestion = %q, want one: %v", v.Suggestion, c.suggestion)
			}
		})
	}
}

func TestAllowSet(t *testing.T) {
	cat, err := procedures.NewCatalogue([]procedures.Tool{
		{Name: "get_jobs", ReadOnly: true},
		{Name: "fetch_logs", ReadOnly: true},
		{Name: "kill_job"},
	})
	if err != nil {
		t.Fatal(err)
	}
	procs := map[string]*procedures.Procedure{
		"proc__fetch_logs__get_jobs": {Name: "proc__fetch_logs__get_jobs", Signature: []string{"fetch_logs", "get_jobs"}},
		"proc__get_jobs__kill_job":   {Name: "proc__get_jobs__kill_job", Signature: []string{"get_jobs", "kill_job"}},
	}
	readOnly := decide.Verdict{Outcome: audit.Allowed, Reason: audit.ReasonReadOnly}
	reviewed := decide.Verdict{Outcome: audit.Allowed, Reason: audit.ReasonOperatorReviewed, StateChanging: true}
	denied := decide.Verdict{Outcome: audit.Denied, Reason: audit.ReasonReviewRequired}
	cases := []struct {
		name string
		sig  []string
		v    decide.Verdict
		want []string
	}{
		{"read-only signature", []string{"fetch_logs", "get_jobs"}, readOnly, []string{"fetch_logs", "get_jobs"}},
		{"state-changing excluded when only read-only allowed", []string{"get_jobs", "kill_job"}, readOnly, []string{"get_jobs"}},
		{"state-changing included when allowed", []string{"get_jobs", "kill_job"}, reviewed, []string{"get_jobs", "kill_job"}},
		{"unknown never", []string{"get_jobs", "kill_job", "mystery"}, reviewed, []string{"get_jobs", "kill_job"}},
		{"unknown never, read-only", []string{"get_jobs", "mystery"}, readOnly, []string{"get_jobs"}},
		{"nested read-only proc", []string{"get_jobs", "proc__fetch_logs__get_jobs"}, readOnly, []string{"get_jobs", "proc__fetch_logs__get_jobs"}},
		{"nested state-changing proc excluded", []string{"get_jobs", "proc__get_jobs__kill_job"}, readOnly, []string{"get_jobs"}},
		{"nested state-changing proc included", []string{"get_jobs", "proc__get_jobs__kill_job"}, reviewed, []string{"get_jobs", "proc__get_jobs__kill_job"}},
		{"missing proc is unknown", []string{"get_jobs", "proc__nope"}, reviewed, []string{"get_jobs"}},
		{"denied allows nothing", []string{"fetch_logs", "get_jobs"}, denied, []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := replay.AllowSet(c.sig, procedures.Classify(c.sig, cat, procs), c.v)
			if !slices.Equal(got, c.want) {
				t.Fatalf("AllowSet = %v, want %v", got, c.want)
			}
			for _, n := range got {
				if !slices.Contains(c.sig, n) {
					t.Fatalf("%s is in the allow-set but not in the signature", n)
				}
			}
		})
	}
}

// TestAllowSetIsAPositiveList: a signature name the classification lists
// nowhere (an incomplete classification) is never permitted, whatever the
// verdict.
func TestAllowSetIsAPositiveList(t *testing.T) {
	sig := []string{"get_jobs", "ghost", "kill_job", "proc__ghost"}
	c := procedures.Classification{ReadOnlyTools: []string{"get_jobs"}, StateChangingTools: []string{"kill_job"}}
	cases := []struct {
		name string
		v    decide.Verdict
		want []string
	}{
		{"read-only verdict", decide.Verdict{Outcome: audit.Allowed, Reason: audit.ReasonReadOnly}, []string{"get_jobs"}},
		{"state-changing verdict", decide.Verdict{Outcome: audit.Allowed, Reason: audit.ReasonOperatorReviewed, StateChanging: true}, []string{"get_jobs", "kill_job"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := replay.AllowSet(sig, c, tc.v); !slices.Equal(got, tc.want) {
				t.Fatalf("AllowSet = %v, want %v (ghost and proc__ghost are in no list)", got, tc.want)
			}
		})
	}
}
