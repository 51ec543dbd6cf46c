package neo4j

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/storewrap"
)

func TestOutageErrors(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", &neo4j.ConnectivityError{Inner: &net.OpError{Op: "dial", Err: errors.New("connection refused")}}, true},
		{"connection lost", &neo4j.ConnectivityError{Inner: io.EOF}, true},
		{"raw EOF after one attempt", &neo4j.TransactionExecutionLimit{Errors: []error{io.EOF}}, true},
		{"net error", &net.OpError{Op: "read", Err: errors.New("reset")}, true},
		{"database unavailable", &neo4j.Neo4jError{Code: "Neo.TransientError.General.DatabaseUnavailable"}, true},
		{"retries ended on an outage", &neo4j.TransactionExecutionLimit{Errors: []error{
			&neo4j.Neo4jError{Code: "Neo.TransientError.Transaction.DeadlockDetected"}, &neo4j.ConnectivityError{Inner: io.EOF}}}, true},
		{"deadlock", &neo4j.Neo4jError{Code: "Neo.TransientError.Transaction.DeadlockDetected"}, false},
		{"retries ended on a deadlock", &neo4j.TransactionExecutionLimit{Errors: []error{
			&neo4j.ConnectivityError{Inner: io.EOF}, &neo4j.Neo4jError{Code: "Neo.TransientError.Transaction.DeadlockDetected"}}}, false},
		{"constraint", &neo4j.Neo4jError{Code: "Neo.ClientError.Schema.ConstraintValidationFailed"}, false},
		{"caller gave up", context.Canceled, false},
		{"procedures error", fault.Errorf(fault.CodeNotFound, "no"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := outage(c.err); got != c.want {
				t.Errorf("outage(%v) = %v, want %v", c.err, got, c.want)
			}
			if got := outage(fmt.Errorf("wrapped: %w", c.err)); got != c.want {
				t.Errorf("outage(wrapped %v) = %v, want %v", c.err, got, c.want)
			}
		})
	}
}

// TestBreakerAnswersErrDown: the store's breaker (storewrap.Breaker) refuses
// with errDown while open: unavailable, with the store's public message.
func TestBreakerAnswersErrDown(t *testing.T) {
	b := storewrap.NewBreaker(func(context.Context) error { return errors.New("connection refused") }, errDown)
	defer b.Shutdown()
	b.Trip(errors.New("down"))
	err := b.Allow()
	if fault.ErrorCode(err) != fault.CodeUnavailable || !errors.Is(err, errDown) {
		t.Fatalf("open breaker: %v, want errDown (unavailable)", err)
	}
	if fault.ErrorMessage(err) != msgUnavailable {
		t.Errorf("public message %q", fault.ErrorMessage(err))
	}
}

func TestTransientErrors(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"deadlock", &neo4j.Neo4jError{Code: "Neo.TransientError.Transaction.DeadlockDetected"}, true},
		{"retries ended on a deadlock", &neo4j.TransactionExecutionLimit{Errors: []error{
			&neo4j.Neo4jError{Code: "Neo.TransientError.Transaction.DeadlockDetected"}}}, true},
		{"constraint", &neo4j.Neo4jError{Code: "Neo.ClientError.Schema.ConstraintValidationFailed"}, false},
		{"syntax", &neo4j.Neo4jError{Code: "Neo.ClientError.Statement.SyntaxError"}, false},
		{"procedures error", fault.Errorf(fault.CodeConflict, "no"), false},
		{"connection lost", io.EOF, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := transient(c.err); got != c.want {
				t.Errorf("transient(%v) = %v, want %v", c.err, got, c.want)
			}
		})
	}
}
