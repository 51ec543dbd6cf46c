package sandbox

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
)

// AdmissionConfig configures an Admission. Zero fields take the defaults.
type AdmissionConfig struct {
	// Slots is how many requests run at once; default 8. Give the Pool
	// behind it at least as many MaxWorkers, so an admitted request never
	// waits for a worker.
	Slots int
	// Queue is how many requests may wait for a slot; default 2×Slots.
	// Negative: none may wait.
	Queue int
	// PerKey caps the requests one key (a token holder) has admitted or
	// waiting at once; 0 means no cap.
	PerKey int
}

// Busy limits: which bound refused a request.
const (
	LimitQueue    = "queue"    // every slot busy and the queue full
	LimitDeadline = "deadline" // the expected wait passes the request's deadline (or did)
	LimitKey      = "key"      // the key already has PerKey requests admitted or waiting
)

// Busy is the error of a request Admission refused: nothing ran.
type Busy struct {
	Limit      string        // LimitQueue, LimitDeadline or LimitKey
	RetryAfter time.Duration // when trying again makes sense (at least 1s)
	Message    string
}

// Error returns the message.
func (b *Busy) Error() string { return b.Message }

// RetryAfterSeconds is RetryAfter in whole seconds, rounded up (at least 1).
func (b *Busy) RetryAfterSeconds() int {
	return max(1, int(math.Ceil(b.RetryAfter.Seconds())))
}

// AdmissionStats are an Admission's state and counters, for /metrics.
type AdmissionStats struct {
	Running, Waiting int64            // now
	Admitted         int64            // since start
	Refused          map[string]int64 // since start, by limit
}

// Admission is the bounded queue in front of the sandbox workers (docs/design.md
// "Admission and deadlines"). A request is admitted at once when a slot is
// free and nobody waits; otherwise it waits in a FIFO queue, or is refused
// at once with *Busy when the queue is full, when its key is at its cap,
// or when the expected wait would pass its deadline (the context's). A
// request whose deadline passes while it waits is refused the same way:
// none waits past its deadline, and one handed a slot with less than half
// the average hold time left is refused too (it could only time out). The
// expected wait is estimated from the recent time requests held their slot.
// Safe for concurrent use.
type Admission struct {
	cfg AdmissionConfig

	mu       sync.Mutex
	running  int
	waiters  []*waiter // FIFO
	perKey   map[string]int
	hold     time.Duration // moving average of how long a slot is held
	admitted int64
	refused  map[string]int64
	now      func() time.Time
}

type waiter struct {
	key   string
	ready chan struct{} // closed when the slot is handed over
}

// NewAdmission returns an Admission for cfg.
func NewAdmission(cfg AdmissionConfig) *Admission {
	if cfg.Slots <= 0 {
		cfg.Slots = 8
	}
	switch {
	case cfg.Queue == 0:
		cfg.Queue = 2 * cfg.Slots
	case cfg.Queue < 0:
		cfg.Queue = 0
	}
	return &Admission{cfg: cfg, perKey: map[string]int{}, refused: map[string]int64{}, now: time.Now}
}

// Acquire admits one request of key, waiting for a slot if need be within
// ctx's deadline. It returns the function that gives the slot back (call
// it once, when the request is done), or a *Busy error, or ctx's error
// when ctx is cancelled while waiting.
func (a *Admission) Acquire(ctx context.Context, key string) (release func(), err error) {
	a.mu.Lock()
	if a.cfg.PerKey > 0 && a.perKey[key] >= a.cfg.PerKey {
		b := a.refuse(LimitKey, a.hold, "this caller already has %d replays running or waiting, the most one caller may have; try again later", a.cfg.PerKey)
		a.mu.Unlock()
		return nil, b
	}
	if a.running < a.cfg.Slots && len(a.waiters) == 0 {
		a.running++
		a.admit(key)
		a.mu.Unlock()
		return a.releaser(key), nil
	}
	wait := a.expectedWait(len(a.waiters))
	if len(a.waiters) >= a.cfg.Queue {
		b := a.refuse(LimitQueue, wait, "every sandbox worker is busy and %d replays are waiting, the most that may; try again later", len(a.waiters))
		a.mu.Unlock()
		return nil, b
	}
	if d, ok := ctx.Deadline(); ok && a.now().Add(wait).After(d) {
		b := a.refuse(LimitDeadline, wait, "every sandbox worker is busy and the expected wait (%s) passes this replay's deadline; try again later", wait.Round(time.Millisecond))
		a.mu.Unlock()
		return nil, b
	}
	w := &waiter{key: key, ready: make(chan struct{})}
	a.waiters = append(a.waiters, w)
	a.perKey[key]++
	a.mu.Unlock()

	select {
	case <-w.ready:
		// Handed a slot with too little time left to use it (less than
		// half the average hold): refused like a wait past the deadline,
		// and the slot goes on to the next.
		a.mu.Lock()
		d, ok := ctx.Deadline()
		if !ok || time.Until(d) >= a.hold/2 {
			a.mu.Unlock()
			return a.releaser(key), nil
		}
		a.admitted-- // counted when the slot was handed over
		a.handBack(key)
		b := a.refuse(LimitDeadline, a.expectedWait(len(a.waiters)), "every sandbox worker stayed busy until too close to this replay's deadline; try again later")
		a.mu.Unlock()
		return nil, b
	case <-ctx.Done():
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	select {
	case <-w.ready: // handed a slot just as ctx ended: pass it on
		a.handBack(key)
	default:
		for i, x := range a.waiters {
			if x == w {
				a.waiters = append(a.waiters[:i], a.waiters[i+1:]...)
				break
			}
		}
		a.drop(key)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, a.refuse(LimitDeadline, a.expectedWait(len(a.waiters)), "every sandbox worker stayed busy until this replay's deadline; try again later")
	}
	return nil, ctx.Err()
}

// TryAcquireSpare admits one request of key only when that makes no other
// request wait: no request is waiting, and another slot stays free (with
// a single slot, when it is free). It never waits or queues, and a refusal
// is not counted: ok is false and the caller tries again later. It is how
// background work (the verification of stale versions) runs beside live
// replays without ever being ahead of one in the queue.
func (a *Admission) TryAcquireSpare(key string) (release func(), ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	spare := a.running+1 < a.cfg.Slots || (a.cfg.Slots == 1 && a.running == 0)
	if !spare || len(a.waiters) > 0 || (a.cfg.PerKey > 0 && a.perKey[key] >= a.cfg.PerKey) {
		return nil, false
	}
	a.running++
	a.admit(key)
	return a.releaser(key), true
}

// admit counts a request of key admitted. a.mu is held.
func (a *Admission) admit(key string) {
	a.admitted++
	a.perKey[key]++
}

// drop forgets one request of key. a.mu is held.
func (a *Admission) drop(key string) {
	if a.perKey[key]--; a.perKey[key] <= 0 {
		delete(a.perKey, key)
	}
}

// releaser returns the function giving back the slot of a request of key
// admitted now.
func (a *Admission) releaser(key string) func() {
	start := a.now()
	var once sync.Once
	return func() {
		once.Do(func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.observe(a.now().Sub(start))
			a.handBack(key)
		})
	}
}

// handBack gives back a slot held by a request of key: to the first
// waiter, or to the free slots. a.mu is held.
func (a *Admission) handBack(key string) {
	a.drop(key)
	if len(a.waiters) == 0 {
		a.running--
		return
	}
	next := a.waiters[0]
	a.waiters = a.waiters[1:]
	a.admitted++ // its key is already counted
	close(next.ready)
}

// observe folds one slot's hold time into the moving average. a.mu is held.
func (a *Admission) observe(d time.Duration) {
	if a.hold == 0 {
		a.hold = d
		return
	}
	a.hold += (d - a.hold) / 8
}

// expectedWait estimates how long a request that finds ahead waiting
// requests before it will wait: the slots free up at Slots per average
// hold time. a.mu is held.
func (a *Admission) expectedWait(ahead int) time.Duration {
	return time.Duration(ahead+1) * a.hold / time.Duration(a.cfg.Slots)
}

// refuse counts and returns a refusal. a.mu is held.
func (a *Admission) refuse(limit string, retry time.Duration, format string, args ...any) *Busy {
	a.refused[limit]++
	return &Busy{Limit: limit, RetryAfter: max(retry, time.Second), Message: fmt.Sprintf(format, args...)}
}

// Stats returns the state and the counters.
func (a *Admission) Stats() AdmissionStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := AdmissionStats{Running: int64(a.running), Waiting: int64(len(a.waiters)), Admitted: a.admitted, Refused: map[string]int64{}}
	for _, l := range []string{LimitQueue, LimitDeadline, LimitKey} {
		s.Refused[l] = a.refused[l]
	}
	return s
}
