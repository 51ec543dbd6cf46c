package gate_test

import (
	"testing"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
)

func TestCheckApproval(t *testing.T) {
	for _, tc := range []struct {
		name        string
		id, session string
		want        fault.Code
	}{
		{"id and session", "t1", "s1", ""},
		{"no id", "", "s1", fault.CodeInvalid},
		{"no session", "t1", "", fault.CodeInvalid},
		{"neither", "", "", fault.CodeInvalid},
		{"session with a control character", "t1", "s\x001", fault.CodeInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := gate.TurnRecord{Turn: gate.Turn{ID: tc.id, SessionID: tc.session}}
			err := gate.CheckApproval(r)
			if got := fault.ErrorCode(err); got != tc.want {
				t.Fatalf("CheckApproval(%q, %q) = %v, want code %q", tc.id, tc.session, err, tc.want)
			}
		})
	}
}

func TestPendingBoundsOrDefaults(t *testing.T) {
	for _, c := range []struct {
		name     string
		in, want gate.PendingBounds
	}{
		{"zero", gate.PendingBounds{}, gate.PendingBounds{Total: gate.DefaultMaxPendingApprovals, PerRequester: gate.DefaultMaxPendingPerRequester}},
		{"total below the default per requester", gate.PendingBounds{Total: 3}, gate.PendingBounds{Total: 3, PerRequester: 3}},
		{"per requester above total", gate.PendingBounds{Total: 10, PerRequester: 20}, gate.PendingBounds{Total: 10, PerRequester: 10}},
		{"both set", gate.PendingBounds{Total: 40, PerRequester: 5}, gate.PendingBounds{Total: 40, PerRequester: 5}},
		{"negative", gate.PendingBounds{Total: -1, PerRequester: -1}, gate.PendingBounds{Total: gate.DefaultMaxPendingApprovals, PerRequester: gate.DefaultMaxPendingPerRequester}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.in.OrDefaults(); got != c.want {
				t.Fatalf("%+v.OrDefaults() = %+v, want %+v", c.in, got, c.want)
			}
		})
	}
}
