package storewrap

import (
	"context"
	"sync"
	"time"
)

// The breaker's probing.
const (
	// ProbeInterval is how often the breaker probes a backend known down.
	ProbeInterval = 250 * time.Millisecond
	// ProbeTimeout bounds one probe.
	ProbeTimeout = time.Second
)

// Breaker is a store's circuit breaker (the Neo4j store's). Closed, calls
// go to the backend. When a call finds the backend unreachable, the store
// trips it: calls then fail at once with the down error, without waiting
// on the backend, and one goroutine probes it every ProbeInterval; the
// first probe that succeeds closes the breaker again. So procgraph answers
// quickly while the backend is down and recovers on its own once it is
// back. Set OnTrip and OnClose before the first call.
type Breaker struct {
	probe func(ctx context.Context) error // one connectivity check
	down  error                           // what Allow answers while open

	// OnTrip, when set, is told of each opening and its cause; OnClose of
	// each closing and how long the backend was down.
	OnTrip  func(cause error)
	OnClose func(down time.Duration)

	mu      sync.Mutex
	open    bool
	stop    chan struct{} // closed by Shutdown: the prober exits
	stopped bool
	trips   int // times the breaker opened, for tests and logs
	since   time.Time
}

// NewBreaker returns a closed breaker that probes with probe while open
// and answers down meanwhile.
func NewBreaker(probe func(ctx context.Context) error, down error) *Breaker {
	return &Breaker{probe: probe, down: down, stop: make(chan struct{})}
}

// Allow returns the down error while the breaker is open, else nil.
func (b *Breaker) Allow() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open {
		return b.down
	}
	return nil
}

// Trip opens the breaker (when closed) and starts the prober.
func (b *Breaker) Trip(cause error) {
	b.mu.Lock()
	if b.open || b.stopped {
		b.mu.Unlock()
		return
	}
	b.open, b.since = true, time.Now()
	b.trips++
	onTrip := b.OnTrip
	b.mu.Unlock()
	if onTrip != nil {
		onTrip(cause)
	}
	go b.run()
}

// run probes until a probe succeeds (closing the breaker) or Shutdown.
func (b *Breaker) run() {
	t := time.NewTicker(ProbeInterval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), ProbeTimeout)
		err := b.probe(ctx)
		cancel()
		if err != nil {
			continue
		}
		b.mu.Lock()
		b.open = false
		down := time.Since(b.since)
		onClose := b.OnClose
		b.mu.Unlock()
		if onClose != nil {
			onClose(down)
		}
		return
	}
}

// Shutdown stops the prober; the breaker stays as it is.
func (b *Breaker) Shutdown() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.stopped {
		b.stopped = true
		close(b.stop)
	}
}

// IsOpen reports whether calls are being refused (for tests and health:
// a store itself asks through Allow).
func (b *Breaker) IsOpen() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.open
}

// Trips is how many times the breaker opened.
func (b *Breaker) Trips() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.trips
}
