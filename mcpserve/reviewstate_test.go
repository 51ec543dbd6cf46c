package mcpserve

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/fault"
)

// TestReviewStateBound: a review's requestState redeems once, for the
// caller, endpoint and arguments it was issued for, before its deadline;
// an altered, forged, foreign, expired or replayed one is refused, and a
// refusal uses nothing up.
func TestReviewStateBound(t *testing.T) {
	now := time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)
	s := newReviewStates()
	s.now = func() time.Time { return now }
	claim := reviewClaim{Turn: "trn_1", Holder: "alice", Phase: "interactive", CodeHash: "c0de", Args: "a1",
		Expires: now.Add(time.Minute).UnixMilli()}
	state, err := s.issue(claim)
	if err != nil {
		t.Fatal(err)
	}
	refused := func(what, state, holder, phase, args string, code fault.Code, reason string) {
		t.Helper()
		_, err := s.redeem(state, holder, phase, args)
		var fe *fault.Error
		if err == nil || !asFault(err, &fe) || fe.Code != code || fe.Details["reason"] != reason {
			t.Fatalf("%s: %v, want %s (%s)", what, err, code, reason)
		}
	}
	p64, m64, _ := strings.Cut(state, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(p64)
	var c map[string]any
	_ = json.Unmarshal(payload, &c)
	c["turn"] = "trn_2" // another turn, under the old MAC
	other, _ := json.Marshal(c)
	forged := base64.RawURLEncoding.EncodeToString(other) + "." + m64

	refused("another turn under the MAC", forged, "alice", "interactive", "a1", fault.CodeInvalid, ReasonRequestState)
	refused("no MAC", p64, "alice", "interactive", "a1", fault.CodeInvalid, ReasonRequestState)
	refused("empty", "", "alice", "interactive", "a1", fault.CodeInvalid, ReasonRequestState)
	refused("oversized", state+strings.Repeat("A", maxStateBytes), "alice", "interactive", "a1", fault.CodeInvalid, ReasonRequestState)
	refused("another caller", state, "bob", "interactive", "a1", fault.CodeInvalid, ReasonRequestState)
	refused("another endpoint", state, "alice", "automatic", "a1", fault.CodeInvalid, ReasonRequestState)
	refused("other arguments", state, "alice", "interactive", "a2", fault.CodeInvalid, ReasonRequestState)
	refused("another handler's key", mustIssue(t, newReviewStates(), claim), "alice", "interactive", "a1", fault.CodeInvalid, ReasonRequestState)

	got, err := s.redeem(state, "alice", "interactive", "a1")
	if err != nil || got.Turn != "trn_1" || got.CodeHash != "c0de" {
		t.Fatalf("the issued state: %+v, %v", got, err)
	}
	refused("replayed", state, "alice", "interactive", "a1", fault.CodeConflict, ReasonRequestStateUsed)

	late := mustIssue(t, s, claim)
	now = now.Add(time.Minute)
	refused("past the deadline", late, "alice", "interactive", "a1", fault.CodeInvalid, ReasonRequestState)
	mustIssue(t, s, claim) // prunes
	if len(s.used) != 0 {
		t.Fatalf("used nonces past their deadline are kept: %d", len(s.used))
	}
}

func mustIssue(t *testing.T, s *reviewStates, c reviewClaim) string {
	t.Helper()
	state, err := s.issue(c)
	if err != nil {
		t.Fatal(err)
	}
	return state
}

// asFault is errors.As for *fault.Error.
func asFault(err error, fe **fault.Error) bool {
	e, ok := err.(*fault.Error)
	*fe = e
	return ok
}
