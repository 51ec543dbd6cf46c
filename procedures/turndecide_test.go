package procedures

import (
	"testing"
	"time"
)

func TestDecideTurn(t *testing.T) {
	cases := []struct {
		name    string
		in      TurnInput
		pending bool
		outcome Outcome
		reason  string
		sc      bool
	}{
		{"automatic read-only", TurnInput{Phase: PhaseAutomatic, ReadOnly: true}, false, Allowed, ReasonReadOnly, false},
		{"automatic state-changing", TurnInput{Phase: PhaseAutomatic}, false, Denied, ReasonStateChangingAuto, false},
		{"unknown phase is automatic", TurnInput{Phase: "x"}, false, Denied, ReasonStateChangingAuto, false},
		{"automatic ignores policy", TurnInput{Phase: PhaseAutomatic, Policy: ChoiceAutoRun}, false, Denied, ReasonStateChangingAuto, false},
		{"automatic ignores grants", TurnInput{Phase: PhaseAutomatic, ProcOnly: true, GrantsActive: true}, false, Denied, ReasonStateChangingAuto, false},
		{"interactive granted procs", TurnInput{Phase: PhaseInteractive, ProcOnly: true, GrantsActive: true}, false, Allowed, ReasonDurableAutoRun, true},
		{"interactive procs without grants", TurnInput{Phase: PhaseInteractive, ProcOnly: true}, true, Denied, ReasonReviewRequired, false},
		{"grants but not proc-only", TurnInput{Phase: PhaseInteractive, GrantsActive: true}, true, Denied, ReasonReviewRequired, false},
		{"session auto_run", TurnInput{Phase: PhaseInteractive, Policy: ChoiceAutoRun}, false, Allowed, ReasonSessionPolicy, true},
		{"session always_ask", TurnInput{Phase: PhaseInteractive, Policy: ChoiceAlwaysAsk}, true, Denied, ReasonReviewRequired, false},
		{"interactive read-only is reviewed", TurnInput{Phase: PhaseInteractive, ReadOnly: true}, true, Denied, ReasonReviewRequired, false},
		{"problem denies", TurnInput{Phase: PhaseInteractive, Problem: ReasonCycle, Policy: ChoiceAutoRun}, false, Denied, ReasonCycle, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := DecideTurn(c.in)
			if v.Pending != c.pending || v.Outcome != c.outcome || v.Reason != c.reason || v.StateChanging != c.sc {
				t.Fatalf("DecideTurn(%+v) = %+v", c.in, v)
			}
			if v.Allowed() != (c.outcome == Allowed && !c.pending) {
				t.Fatalf("Allowed() = %v", v.Allowed())
			}
		})
	}
	for _, c := range Choices {
		v := ResolveVerdict(c)
		if v.Allowed() != (c != ChoiceReject) {
			t.Fatalf("ResolveVerdict(%s) = %+v", c, v)
		}
	}
	if ResolveVerdict("RUN_ONCE").Allowed() || ResolveVerdict("").Allowed() {
		t.Fatal("an unknown choice runs")
	}
	for _, id := range []string{"", "trn_", "TRN_0123456789abcdef0123456789abcdef", "trn_0123456789ABCDEF0123456789abcdef", " trn_0123456789abcdef0123456789abcdef", "trn_0123456789abcdef0123456789abcdef0"} {
		if ValidTurnID(id) {
			t.Fatalf("ValidTurnID(%q)", id)
		}
	}
	if id := NewTurnID(time.Now()); !ValidTurnID(id) {
		t.Fatalf("NewTurnID = %q is not canonical", id)
	}
}
