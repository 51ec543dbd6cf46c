package procedures_test

import (
	"testing"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
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
			r := procedures.TurnRecord{Turn: procedures.Turn{ID: tc.id, SessionID: tc.session}}
			err := procedures.CheckApproval(r)
			if got := fault.ErrorCode(err); got != tc.want {
				t.Fatalf("CheckApproval(%q, %q) = %v, want code %q", tc.id, tc.session, err, tc.want)
			}
		})
	}
}

func TestPendingBoundsOrDefaults(t *testing.T) {
	for _, c := range []struct {
		name     string
		in, want procedures.PendingBounds
	}{
		{"zero", procedures.PendingBounds{}, procedures.PendingBounds{Total: procedures.DefaultMaxPendingApprovals, PerRequester: procedures.DefaultMaxPendingPerRequester}},
		{"total below the default per requester", procedures.PendingBounds{Total: 3}, procedures.PendingBounds{Total: 3, PerRequester: 3}},
		{"per requester above total", procedures.PendingBounds{Total: 10, PerRequester: 20}, procedures.PendingBounds{Total: 10, PerRequester: 10}},
		{"both set", procedures.PendingBounds{Total: 40, PerRequester: 5}, procedures.PendingBounds{Total: 40, PerRequester: 5}},
		{"negative", procedures.PendingBounds{Total: -1, PerRequester: -1}, procedures.PendingBounds{Total: procedures.DefaultMaxPendingApprovals, PerRequester: procedures.DefaultMaxPendingPerRequester}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.in.OrDefaults(); got != c.want {
				t.Fatalf("%+v.OrDefaults() = %+v, want %+v", c.in, got, c.want)
			}
		})
	}
}
