package answer

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/procgraph/procgraph/procedures"
)

func TestOf(t *testing.T) {
	d := procedures.Decision{Kind: procedures.KindInvoke, Outcome: procedures.Denied, Reason: "r"}
	cases := []struct {
		name    string
		err     error
		status  int
		code    procedures.Code
		message string
		details int
	}{
		{"plain error", errors.New("open /secret/path: boom"), 500, procedures.CodeInternal, "internal error", 0},
		{"internal code", procedures.Errorf(procedures.CodeInternal, "store /secret/path").WithDetails("path", "/secret"), 500, procedures.CodeInternal, "internal error", 0},
		{"wrapped internal", fmt.Errorf("ctx: %w", procedures.Errorf(procedures.CodeInternal, "/secret")), 500, procedures.CodeInternal, "internal error", 0},
		{"invalid", procedures.Errorf(procedures.CodeInvalid, "bad field").WithDetails("field", "x"), 400, procedures.CodeInvalid, "bad field", 1},
		{"wrapped not found", fmt.Errorf("ctx: %w", procedures.Errorf(procedures.CodeNotFound, "no such")), 404, procedures.CodeNotFound, "no such", 0},
		{"denied with decision", procedures.Errorf(procedures.CodeDenied, "denied").WithDecision(d), 403, procedures.CodeDenied, "denied", 1},
		{"unavailable", procedures.Errorf(procedures.CodeUnavailable, "down"), 503, procedures.CodeUnavailable, "down", 0},
		{"unauthorized", procedures.Errorf(procedures.CodeUnauthorized, "token"), http.StatusUnauthorized, procedures.CodeUnauthorized, "token", 0},
		{"too large", procedures.Errorf(procedures.CodeTooLarge, "big"), 413, procedures.CodeTooLarge, "big", 0},
		{"invalid code", procedures.Errorf(procedures.CodeInvalidCode, "x"), 422, procedures.CodeInvalidCode, "x", 0},
		{"conflict", procedures.Errorf(procedures.CodeConflict, "x"), 409, procedures.CodeConflict, "x", 0},
		{"busy", procedures.Errorf(procedures.CodeBusy, "queue full").WithDetails("reason", "replay_queue").WithDetails(procedures.DetailRetryAfter, 2), 429, procedures.CodeBusy, "queue full", 2},
		{"unknown code", procedures.Errorf("weird", "x"), 500, "weird", "x", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := Of(tc.err)
			if a.Status != tc.status || a.Code != tc.code || a.Message != tc.message || len(a.Details) != tc.details || a.Details == nil {
				t.Fatalf("Of = %+v, want %d %s %q with %d details", a, tc.status, tc.code, tc.message, tc.details)
			}
			if wantRetry := tc.code == procedures.CodeBusy; (a.RetryAfter == 2) != wantRetry {
				t.Fatalf("RetryAfter = %d", a.RetryAfter)
			}
			if b := a.Body(); b.Error.Code != a.Code || b.Error.Message != a.Message {
				t.Fatalf("Body = %+v", b)
			}
		})
	}
	if Of(nil) != nil {
		t.Fatal("Of(nil) is not nil")
	}
	if got, ok := procedures.DecisionOf(procedures.Errorf(procedures.CodeDenied, "x").WithDecision(d)); !ok || got.Reason != "r" {
		t.Fatalf("DecisionOf = %+v, %v", got, ok)
	}
	if _, ok := procedures.DecisionOf(fmt.Errorf("plain")); ok {
		t.Fatal("a plain error carries a decision")
	}
}
