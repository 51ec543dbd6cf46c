package sandbox_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/procgraph/procgraph/sandbox"
)

// mustAcquire admits one request or fails the test.
func mustAcquire(tb testing.TB, a *sandbox.Admission, ctx context.Context, key string) func() {
	tb.Helper()
	release, err := a.Acquire(ctx, key)
	if err != nil {
		tb.Fatalf("Acquire(%s): %v", key, err)
	}
	return release
}

// busyLimit returns the limit of a *sandbox.Busy error, or "" for another error.
func busyLimit(err error) string {
	var b *sandbox.Busy
	if errors.As(err, &b) {
		return b.Limit
	}
	return ""
}

// waitFor polls until n requests wait.
func waitFor(tb testing.TB, a *sandbox.Admission, n int64) {
	tb.Helper()
	for range 2000 {
		if a.Stats().Waiting == n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	tb.Fatalf("waiting = %d, want %d", a.Stats().Waiting, n)
}

func TestAdmissionRefusals(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		cfg   sandbox.AdmissionConfig
		hold  time.Duration // the average hold time to assume
		setup []string      // keys admitted first (their slots held)
		wait  []string      // keys left waiting
		key   string
		ttl   time.Duration // the request's deadline from now; 0: none
		limit string        // "" when admitted
	}{
		{"free slot", sandbox.AdmissionConfig{Slots: 2}, 0, []string{"a"}, nil, "a", 0, ""},
		{"queue full", sandbox.AdmissionConfig{Slots: 1, Queue: 1}, 0, []string{"a"}, []string{"b"}, "c", 0, sandbox.LimitQueue},
		{"no queue", sandbox.AdmissionConfig{Slots: 1, Queue: -1}, 0, []string{"a"}, nil, "c", 0, sandbox.LimitQueue},
		{"key at its cap", sandbox.AdmissionConfig{Slots: 4, PerKey: 2}, 0, []string{"a", "a"}, nil, "a", 0, sandbox.LimitKey},
		{"key cap counts waiters", sandbox.AdmissionConfig{Slots: 1, PerKey: 2}, 0, []string{"a"}, []string{"a"}, "a", 0, sandbox.LimitKey},
		{"another key under the cap", sandbox.AdmissionConfig{Slots: 4, PerKey: 2}, 0, []string{"a", "a"}, nil, "b", 0, ""},
		{"expected wait passes the deadline", sandbox.AdmissionConfig{Slots: 1}, 10 * time.Second, []string{"a"}, nil, "b", time.Second, sandbox.LimitDeadline},
		{"waiting ahead counts", sandbox.AdmissionConfig{Slots: 2}, 2 * time.Second, []string{"a", "a"}, []string{"b", "b", "b"}, "c", 3 * time.Second, sandbox.LimitDeadline},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := sandbox.NewAdmission(tc.cfg)
			sandbox.SetHold(a, tc.hold)
			for _, k := range tc.setup {
				defer mustAcquire(t, a, ctx, k)()
			}
			wctx, cancel := context.WithCancel(ctx)
			defer cancel()
			for i, k := range tc.wait {
				go func() { _, _ = a.Acquire(wctx, k) }()
				waitFor(t, a, int64(i+1))
			}
			// Every request has a deadline, so a bound that stopped
			// refusing makes this case fail (refused at the deadline, or
			// admitted) instead of waiting for ever.
			ttl := tc.ttl
			if ttl == 0 {
				ttl = 10 * time.Second
			}
			rctx, c := context.WithTimeout(ctx, ttl)
			defer c()
			start := time.Now()
			release, err := a.Acquire(rctx, tc.key)
			if got := busyLimit(err); got != tc.limit || (tc.limit == "" && err != nil) {
				t.Fatalf("Acquire = %v (limit %q), want limit %q", err, got, tc.limit)
			}
			if err == nil {
				release()
				return
			}
			if d := time.Since(start); d > tc.ttl/2 && tc.ttl > 0 {
				t.Errorf("refused after %v: not at once", d)
			}
			var b *sandbox.Busy
			errors.As(err, &b)
			if b.RetryAfterSeconds() < 1 || b.Message == "" {
				t.Errorf("busy = %+v", b)
			}
			if s := a.Stats(); s.Refused[tc.limit] != 1 {
				t.Errorf("stats = %+v", s)
			}
		})
	}
}

// TestAdmissionFIFO: a released slot goes to the first waiter, then the next.
func TestAdmissionFIFO(t *testing.T) {
	a := sandbox.NewAdmission(sandbox.AdmissionConfig{Slots: 1, Queue: 3})
	release := mustAcquire(t, a, context.Background(), "x")
	order := make(chan string, 3)
	var done sync.WaitGroup
	for i, k := range []string{"first", "second", "third"} {
		done.Add(1)
		go func() {
			defer done.Done()
			r := mustAcquire(t, a, context.Background(), k)
			order <- k
			r()
		}()
		waitFor(t, a, int64(i+1))
	}
	release()
	for _, want := range []string{"first", "second", "third"} {
		if got := <-order; got != want {
			t.Fatalf("admitted %s, want %s", got, want)
		}
	}
	done.Wait() // the last one has released its slot
	if s := a.Stats(); s.Running != 0 || s.Waiting != 0 || s.Admitted != 4 {
		t.Fatalf("stats = %+v", s)
	}
}

// TestAdmissionDeadlineWhileWaiting: a request whose deadline passes while
// it waits is refused (busy, deadline), and leaves nothing behind.
func TestAdmissionDeadlineWhileWaiting(t *testing.T) {
	a := sandbox.NewAdmission(sandbox.AdmissionConfig{Slots: 1, PerKey: 1})
	release := mustAcquire(t, a, context.Background(), "x")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := a.Acquire(ctx, "y")
	if busyLimit(err) != sandbox.LimitDeadline {
		t.Fatalf("Acquire = %v", err)
	}
	cctx, ccancel := context.WithCancel(context.Background())
	go func() { waitFor(t, a, 1); ccancel() }()
	if _, err := a.Acquire(cctx, "y"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Acquire = %v", err)
	}
	release()
	// y's cap (1) is free again, and so is the slot.
	mustAcquire(t, a, context.Background(), "y")()
	if s := a.Stats(); s.Running != 0 || s.Waiting != 0 {
		t.Fatalf("stats = %+v", s)
	}
}

// TestAdmissionTooLateForTheSlot: a waiter handed a slot with less than
// half the average hold time left is refused (busy, deadline) instead of
// running only to time out, and the slot goes on to the next waiter.
func TestAdmissionTooLateForTheSlot(t *testing.T) {
	a := sandbox.NewAdmission(sandbox.AdmissionConfig{Slots: 1})
	release := mustAcquire(t, a, context.Background(), "x")
	short, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	errs := make(chan error, 1)
	go func() { _, err := a.Acquire(short, "late"); errs <- err }()
	waitFor(t, a, 1)
	next := make(chan func(), 1)
	go func() { next <- mustAcquire(t, a, context.Background(), "next") }()
	waitFor(t, a, 2)
	sandbox.SetHold(a, 10*time.Second) // slots turn out to be held ~10 s
	release()
	if err := <-errs; busyLimit(err) != sandbox.LimitDeadline {
		t.Fatalf("late waiter: %v", err)
	}
	(<-next)()
	if s := a.Stats(); s.Running != 0 || s.Waiting != 0 || s.Admitted != 2 || s.Refused[sandbox.LimitDeadline] != 1 {
		t.Fatalf("stats = %+v", s)
	}
}

// TestAdmissionSpare: background work takes a slot only when no request
// waits and another slot stays free (the only one, when there is one);
// it never waits or queues, and gives its slot back like any.
func TestAdmissionSpare(t *testing.T) {
	for _, tc := range []struct {
		name    string
		slots   int
		held    int  // live requests holding a slot
		waiting bool // and one more waiting
		want    bool
	}{
		{"one slot, free", 1, 0, false, true},
		{"one slot, held", 1, 1, false, false},
		{"two slots, both free", 2, 0, false, true},
		{"two slots, one held: the other stays free", 2, 1, false, false},
		{"four slots, two held", 4, 2, false, true},
		{"four slots, three held", 4, 3, false, false},
		{"a request waits", 1, 1, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := sandbox.NewAdmission(sandbox.AdmissionConfig{Slots: tc.slots, Queue: 2})
			var releases []func()
			for range tc.held {
				releases = append(releases, mustAcquire(t, a, context.Background(), "live"))
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.waiting {
				go func() { _, _ = a.Acquire(ctx, "waiter") }()
				waitFor(t, a, 1)
			}
			release, ok := a.TryAcquireSpare("background")
			if ok != tc.want {
				t.Fatalf("TryAcquireSpare = %v, want %v (stats %+v)", ok, tc.want, a.Stats())
			}
			if ok {
				if s := a.Stats(); s.Running != int64(tc.held+1) {
					t.Fatalf("running %d with the spare slot taken, want %d", s.Running, tc.held+1)
				}
				release()
			}
			cancel()
			for _, r := range releases {
				r()
			}
			deadline := time.Now().Add(5 * time.Second)
			for s := a.Stats(); s.Running != 0 || s.Waiting != 0; s = a.Stats() {
				if time.Now().After(deadline) {
					t.Fatalf("left behind: %+v", s)
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
}
