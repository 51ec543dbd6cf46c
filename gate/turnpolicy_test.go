package gate_test

import (
	"testing"
	"time"

	"github.com/procgraph/procgraph/gate"
)

// TestPolicyAppliesTo: a policy decides only its own requester's turns; one
// bound to nobody (stored or dumped before policies were bound) decides
// none.
func TestPolicyAppliesTo(t *testing.T) {
	cases := []struct {
		name, boundTo, requester string
		want                     bool
	}{
		{"its requester", "agent", "agent", true},
		{"another requester", "agent", "agent2", false},
		{"anonymous under a bound policy", "agent", "anonymous", false},
		{"bound to nobody", "", "agent", false},
		{"bound to nobody, empty requester", "", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := gate.SessionPolicy{SessionID: "s", CodeHash: "h", Policy: gate.ChoiceAutoRun, RequestedBy: c.boundTo}
			if got := p.AppliesTo(c.requester); got != c.want {
				t.Fatalf("AppliesTo(%q) with RequestedBy %q = %v, want %v", c.requester, c.boundTo, got, c.want)
			}
		})
	}
}

// TestChoicesAndTurnIDs: every choice but reject runs a turn, an unknown
// one none; only canonical turn ids are valid, and NewTurnID makes them.
func TestChoicesAndTurnIDs(t *testing.T) {
	for _, c := range gate.Choices {
		if c.Runs() != (c != gate.ChoiceReject) {
			t.Fatalf("%s.Runs() = %v", c, c.Runs())
		}
	}
	if gate.Choice("RUN_ONCE").Runs() || gate.Choice("").Runs() {
		t.Fatal("an unknown choice runs")
	}
	for _, id := range []string{"", "trn_", "TRN_0123456789abcdef0123456789abcdef", "trn_0123456789ABCDEF0123456789abcdef", " trn_0123456789abcdef0123456789abcdef", "trn_0123456789abcdef0123456789abcdef0"} {
		if gate.ValidTurnID(id) {
			t.Fatalf("ValidTurnID(%q)", id)
		}
	}
	if id := gate.NewTurnID(time.Now()); !gate.ValidTurnID(id) {
		t.Fatalf("NewTurnID = %q is not canonical", id)
	}
}
