package answer

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
)

func TestOf(t *testing.T) {
	d := audit.Decision{Kind: audit.KindInvoke, Outcome: audit.Denied, Reason: "r"}
	cases := []struct {
		name    string
		err     error
		status  int
		code    fault.Code
		message string
		details int
	}{
		{"plain error", errors.New("open /secret/path: boom"), 500, fault.CodeInternal, "internal error", 0},
		{"internal code", fault.Errorf(fault.CodeInternal, "store /secret/path").WithDetails("path", "/secret"), 500, fault.CodeInternal, "internal error", 0},
		{"wrapped internal", fmt.Errorf("ctx: %w", fault.Errorf(fault.CodeInternal, "/secret")), 500, fault.CodeInternal, "internal error", 0},
		{"invalid", fault.Errorf(fault.CodeInvalid, "bad field").WithDetails("field", "x"), 400, fault.CodeInvalid, "bad field", 1},
		{"wrapped not found", fmt.Errorf("ctx: %w", fault.Errorf(fault.CodeNotFound, "no such")), 404, fault.CodeNotFound, "no such", 0},
		{"denied with decision", fault.Errorf(fault.CodeDenied, "denied").WithDetails(fault.DetailDecision, d), 403, fault.CodeDenied, "denied", 1},
		{"unavailable", fault.Errorf(fault.CodeUnavailable, "down"), 503, fault.CodeUnavailable, "down", 0},
		{"unauthorized", fault.Errorf(fault.CodeUnauthorized, "token"), http.StatusUnauthorized, fault.CodeUnauthorized, "token", 0},
		{"too large", fault.Errorf(fault.CodeTooLarge, "big"), 413, fault.CodeTooLarge, "big", 0},
		{"invalid code", fault.Errorf(fault.CodeInvalidCode, "x"), 422, fault.CodeInvalidCode, "x", 0},
		{"conflict", fault.Errorf(fault.CodeConflict, "x"), 409, fault.CodeConflict, "x", 0},
		{"busy", fault.Errorf(fault.CodeBusy, "queue full").WithDetails("reason", "replay_queue").WithDetails(fault.DetailRetryAfter, 2), 429, fault.CodeBusy, "queue full", 2},
		{"unknown code", fault.Errorf("weird", "x"), 500, "weird", "x", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := Of(tc.err)
			if a.Status != tc.status || a.Code != tc.code || a.Message != tc.message || len(a.Details) != tc.details || a.Details == nil {
				t.Fatalf("Of = %+v, want %d %s %q with %d details", a, tc.status, tc.code, tc.message, tc.details)
			}
			if wantRetry := tc.code == fault.CodeBusy; (a.RetryAfter == 2) != wantRetry {
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
	if got, ok := audit.DecisionOf(fault.Errorf(fault.CodeDenied, "x").WithDetails(fault.DetailDecision, d)); !ok || got.Reason != "r" {
		t.Fatalf("DecisionOf = %+v, %v", got, ok)
	}
	if _, ok := audit.DecisionOf(fmt.Errorf("plain")); ok {
		t.Fatal("a plain error carries a decision")
	}
}
