package procedures

import (
	"testing"
)

func TestDecideTurns(t *testing.T) {
	cases := []struct {
		name    string
		in      DecisionInput
		pending bool
		outcome Outcome
		reason  string
		sc      bool
	}{
		{"automatic read-only", DecisionInput{Turn: true, Phase: PhaseAutomatic, ReadOnly: true}, false, Allowed, ReasonReadOnly, false},
		{"automatic state-changing", DecisionInput{Turn: true, Phase: PhaseAutomatic}, false, Denied, ReasonStateChangingAuto, false},
		{"unknown phase is automatic", DecisionInput{Turn: true, Phase: "x"}, false, Denied, ReasonStateChangingAuto, false},
		{"automatic ignores policy", DecisionInput{Turn: true, Phase: PhaseAutomatic, PolicyAutoRun: true}, false, Denied, ReasonStateChangingAuto, false},
		{"automatic ignores grants", DecisionInput{Turn: true, Phase: PhaseAutomatic, GrantActive: true}, false, Denied, ReasonStateChangingAuto, false},
		{"interactive granted procs", DecisionInput{Turn: true, Phase: PhaseInteractive, GrantActive: true}, false, Allowed, ReasonDurableAutoRun, true},
		{"interactive procs without grants", DecisionInput{Turn: true, Phase: PhaseInteractive}, true, Denied, ReasonReviewRequired, false},
		{"grants but not proc-only", DecisionInput{Turn: true, Phase: PhaseInteractive}, true, Denied, ReasonReviewRequired, false},
		{"session auto_run", DecisionInput{Turn: true, Phase: PhaseInteractive, PolicyAutoRun: true}, false, Allowed, ReasonSessionPolicy, true},
		{"session always_ask", DecisionInput{Turn: true, Phase: PhaseInteractive}, true, Denied, ReasonReviewRequired, false},
		{"interactive read-only is reviewed", DecisionInput{Turn: true, Phase: PhaseInteractive, ReadOnly: true}, true, Denied, ReasonReviewRequired, false},
		{"problem denies", DecisionInput{Turn: true, Phase: PhaseInteractive, Problem: ReasonCycle, PolicyAutoRun: true}, false, Denied, ReasonCycle, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Decide(c.in)
			if v.Pending != c.pending || v.Outcome != c.outcome || v.Reason != c.reason || v.StateChanging != c.sc {
				t.Fatalf("Decide(%+v) = %+v", c.in, v)
			}
			if v.Allowed() != (c.outcome == Allowed && !c.pending) {
				t.Fatalf("Allowed() = %v", v.Allowed())
			}
		})
	}
	if v := ResolveVerdict(true); !v.Allowed() || v.Reason != ReasonOperatorApproved || !v.StateChanging {
		t.Fatalf("ResolveVerdict(true) = %+v", v)
	}
	if v := ResolveVerdict(false); v.Allowed() || v.Reason != ReasonOperatorRejected {
		t.Fatalf("ResolveVerdict(false) = %+v", v)
	}
}
