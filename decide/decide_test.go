package decide

import (
	"testing"

	"github.com/procgraph/procgraph/audit"
)

func TestDecideTurns(t *testing.T) {
	cases := []struct {
		name    string
		in      DecisionInput
		pending bool
		outcome audit.Outcome
		reason  string
		sc      bool
	}{
		{"automatic read-only", DecisionInput{Turn: true, Phase: audit.PhaseAutomatic, ReadOnly: true}, false, audit.Allowed, audit.ReasonReadOnly, false},
		{"automatic state-changing", DecisionInput{Turn: true, Phase: audit.PhaseAutomatic}, false, audit.Denied, audit.ReasonStateChangingAuto, false},
		{"unknown phase is automatic", DecisionInput{Turn: true, Phase: "x"}, false, audit.Denied, audit.ReasonStateChangingAuto, false},
		{"automatic ignores policy", DecisionInput{Turn: true, Phase: audit.PhaseAutomatic, PolicyAutoRun: true}, false, audit.Denied, audit.ReasonStateChangingAuto, false},
		{"automatic ignores grants", DecisionInput{Turn: true, Phase: audit.PhaseAutomatic, GrantActive: true}, false, audit.Denied, audit.ReasonStateChangingAuto, false},
		{"interactive granted procs", DecisionInput{Turn: true, Phase: audit.PhaseInteractive, GrantActive: true}, false, audit.Allowed, audit.ReasonDurableAutoRun, true},
		{"interactive procs without grants", DecisionInput{Turn: true, Phase: audit.PhaseInteractive}, true, audit.Denied, audit.ReasonReviewRequired, false},
		{"grants but not proc-only", DecisionInput{Turn: true, Phase: audit.PhaseInteractive}, true, audit.Denied, audit.ReasonReviewRequired, false},
		{"session auto_run", DecisionInput{Turn: true, Phase: audit.PhaseInteractive, PolicyAutoRun: true}, false, audit.Allowed, audit.ReasonSessionPolicy, true},
		{"session always_ask", DecisionInput{Turn: true, Phase: audit.PhaseInteractive}, true, audit.Denied, audit.ReasonReviewRequired, false},
		{"interactive read-only is reviewed", DecisionInput{Turn: true, Phase: audit.PhaseInteractive, ReadOnly: true}, true, audit.Denied, audit.ReasonReviewRequired, false},
		{"problem denies", DecisionInput{Turn: true, Phase: audit.PhaseInteractive, Problem: audit.ReasonCycle, PolicyAutoRun: true}, false, audit.Denied, audit.ReasonCycle, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Decide(c.in)
			if v.Pending != c.pending || v.Outcome != c.outcome || v.Reason != c.reason || v.StateChanging != c.sc {
				t.Fatalf("Decide(%+v) = %+v", c.in, v)
			}
			if v.Allowed() != (c.outcome == audit.Allowed && !c.pending) {
				t.Fatalf("Allowed() = %v", v.Allowed())
			}
		})
	}
	if v := ResolveVerdict(true); !v.Allowed() || v.Reason != audit.ReasonOperatorApproved || !v.StateChanging {
		t.Fatalf("ResolveVerdict(true) = %+v", v)
	}
	if v := ResolveVerdict(false); v.Allowed() || v.Reason != audit.ReasonOperatorRejected {
		t.Fatalf("ResolveVerdict(false) = %+v", v)
	}
}
