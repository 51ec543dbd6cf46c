package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/procgraph/procgraph/sandbox"
)

// TestCallFailure: a ToolCaller's CallFailure reads as its message, is an
// *Error of its code to errors.As (wrapped or not), and unwraps to its
// cause.
func TestCallFailure(t *testing.T) {
	var err error = &sandbox.CallFailure{Code: sandbox.Timeout, Message: "tool x: upstream did not answer within 1s", Cause: context.DeadlineExceeded}
	err = fmt.Errorf("wrapped: %w", err)
	if err.Error() != "wrapped: tool x: upstream did not answer within 1s" || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%v", err)
	}
	se, ok := errors.AsType[*sandbox.Error](err)
	if !ok || se.Code != sandbox.Timeout || se.Message != "tool x: upstream did not answer within 1s" {
		t.Fatalf("as *Error: %+v", se)
	}
}
