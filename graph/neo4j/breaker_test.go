package neo4jstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/procgraph/procgraph/fault"
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

// TestBreaker trips the breaker, checks that it refuses with unavailable and
// keeps probing while probes fail, and closes by itself once one succeeds.
func TestBreaker(t *testing.T) {
	var up atomic.Bool
	var probes atomic.Int64
	b := newBreaker(func(ctx context.Context) error {
		probes.Add(1)
		if _, ok := ctx.Deadline(); !ok {
			t.Error("a probe without a deadline")
		}
		if up.Load() {
			return nil
		}
		return errors.New("connection refused")
	})
	defer b.shutdown()
	if err := b.allow(); err != nil {
		t.Fatalf("a new breaker refuses: %v", err)
	}
	b.trip(errors.New("down"))
	b.trip(errors.New("down again")) // one prober only
	err := b.allow()
	if fault.ErrorCode(err) != fault.CodeUnavailable || !errors.Is(err, errDown) {
		t.Fatalf("open breaker: %v, want errDown (unavailable)", err)
	}
	if fault.ErrorMessage(err) != msgUnavailable {
		t.Errorf("public message %q", fault.ErrorMessage(err))
	}
	waitFor(t, "two failed probes", func() bool { return probes.Load() >= 2 })
	if !b.isOpen() {
		t.Fatal("the breaker closed while probes fail")
	}
	up.Store(true)
	waitFor(t, "the breaker to close", func() bool { return !b.isOpen() })
	if err := b.allow(); err != nil {
		t.Fatalf("closed breaker refuses: %v", err)
	}
	if b.trips != 1 {
		t.Errorf("trips = %d, want 1", b.trips)
	}
}

// TestBreakerShutdown: after shutdown the prober stops and trip starts none.
func TestBreakerShutdown(t *testing.T) {
	var probes atomic.Int64
	b := newBreaker(func(context.Context) error { probes.Add(1); return errors.New("down") })
	b.trip(errors.New("down"))
	waitFor(t, "a probe", func() bool { return probes.Load() >= 1 })
	b.shutdown()
	b.shutdown()
	n := probes.Load()
	time.Sleep(3 * probeInterval)
	if got := probes.Load(); got > n+1 {
		t.Errorf("%d probes after shutdown", got-n)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
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
