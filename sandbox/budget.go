package sandbox

import (
	"sync/atomic"

	"golang.org/x/sync/semaphore"
)

// Default bounds on the memory tool calls take in the server.
const (
	// DefaultMaxCallBytes bounds one tool call's arguments and its result,
	// as JSON.
	DefaultMaxCallBytes = 4 << 20
	// DefaultMaxInflightBytes is the default size of a Budget.
	DefaultMaxInflightBytes = 256 << 20
)

// Copies a tool call's bytes are reserved for: its arguments are held in
// the server as the frame read from the worker (and its copy), the decoded
// value and the request the dispatcher encodes; its result as the encoded
// value and the frame written to the worker.
const (
	// ArgsCopies is how many times a call's argument bytes are reserved:
	// a Budget smaller than ArgsCopies×MaxCallBytes cannot hold the
	// largest call.
	ArgsCopies   = 4
	resultCopies = 2
)

// Budget bounds the memory tool calls hold in the server at once, across
// every run of every pool that shares it (docs/design.md "Admission and
// deadlines"): a call's arguments are reserved when its frame arrives from
// the worker, before the server reads them, and held until the call is
// answered; its result is reserved when the dispatcher returns it. A
// reservation that does not fit fails the call at once (runtime_error for
// arguments, tool_failed for a result): a read-only procedure cannot grow
// the server. Safe for concurrent use; a nil *Budget bounds nothing.
type Budget struct {
	size    int64
	sem     *semaphore.Weighted
	inUse   atomic.Int64
	refused atomic.Int64
}

// BudgetStats are a Budget's size, bytes reserved now, and refusals since
// start.
type BudgetStats struct {
	Size, InUse, Refused int64
}

// NewBudget returns a Budget of size bytes (DefaultMaxInflightBytes when
// size <= 0).
func NewBudget(size int64) *Budget {
	if size <= 0 {
		size = DefaultMaxInflightBytes
	}
	return &Budget{size: size, sem: semaphore.NewWeighted(size)}
}

// reserve takes n bytes if they fit now, and returns the function that
// gives them back.
func (b *Budget) reserve(n int64) (release func(), ok bool) {
	if b == nil || n <= 0 {
		return func() {}, true
	}
	if !b.sem.TryAcquire(n) {
		b.refused.Add(1)
		return nil, false
	}
	b.inUse.Add(n)
	var done atomic.Bool
	return func() {
		if done.CompareAndSwap(false, true) {
			b.inUse.Add(-n)
			b.sem.Release(n)
		}
	}, true
}

// Stats returns the budget's figures.
func (b *Budget) Stats() BudgetStats {
	if b == nil {
		return BudgetStats{}
	}
	return BudgetStats{Size: b.size, InUse: b.inUse.Load(), Refused: b.refused.Load()}
}
