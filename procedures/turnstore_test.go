package procedures_test

import (
	"testing"

	"github.com/procgraph/procgraph/procedures"
)

func TestCheckApproval(t *testing.T) {
	for _, tc := range []struct {
		name        string
		id, session string
		want        procedures.Code
	}{
		{"id and session", "t1", "s1", ""},
		{"no id", "", "s1", procedures.CodeInvalid},
		{"no session", "t1", "", procedures.CodeInvalid},
		{"neither", "", "", procedures.CodeInvalid},
		{"session with a control character", "t1", "s\x001", procedures.CodeInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := procedures.TurnRecord{Turn: procedures.Turn{ID: tc.id, SessionID: tc.session}}
			err := procedures.CheckApproval(r)
			if got := procedures.ErrorCode(err); got != tc.want {
				t.Fatalf("CheckApproval(%q, %q) = %v, want code %q", tc.id, tc.session, err, tc.want)
			}
		})
	}
}
