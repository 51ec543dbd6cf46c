package storewrap

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/procgraph/procgraph/fault"
)

// errDown is what the breakers of these tests answer while open.
var errDown = fault.Errorf(fault.CodeUnavailable, "the store can't be reached")

// TestBreaker trips the breaker, checks that it refuses with the down error and
// keeps probing while probes fail, and closes by itself once one succeeds.
func TestBreaker(t *testing.T) {
	var up atomic.Bool
	var probes atomic.Int64
	b := NewBreaker(func(ctx context.Context) error {
		probes.Add(1)
		if _, ok := ctx.Deadline(); !ok {
			t.Error("a probe without a deadline")
		}
		if up.Load() {
			return nil
		}
		return errors.New("connection refused")
	}, errDown)
	defer b.Shutdown()
	if err := b.Allow(); err != nil {
		t.Fatalf("a new breaker refuses: %v", err)
	}
	b.Trip(errors.New("down"))
	b.Trip(errors.New("down again")) // one prober only
	err := b.Allow()
	if fault.ErrorCode(err) != fault.CodeUnavailable || !errors.Is(err, errDown) {
		t.Fatalf("open breaker: %v, want the down error (unavailable)", err)
	}
	waitFor(t, "two failed probes", func() bool { return probes.Load() >= 2 })
	if !b.IsOpen() {
		t.Fatal("the breaker closed while probes fail")
	}
	up.Store(true)
	waitFor(t, "the breaker to close", func() bool { return !b.IsOpen() })
	if err := b.Allow(); err != nil {
		t.Fatalf("closed breaker refuses: %v", err)
	}
	if b.Trips() != 1 {
		t.Errorf("trips = %d, want 1", b.Trips())
	}
}

// TestBreakerShutdown: after shutdown the prober stops and trip starts none.
func TestBreakerShutdown(t *testing.T) {
	var probes atomic.Int64
	b := NewBreaker(func(context.Context) error { probes.Add(1); return errors.New("down") }, errDown)
	b.Trip(errors.New("down"))
	waitFor(t, "a probe", func() bool { return probes.Load() >= 1 })
	b.Shutdown()
	b.Shutdown()
	n := probes.Load()
	time.Sleep(3 * ProbeInterval)
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
