package changes

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ChangeKind is what a committed change changed.
type ChangeKind string

// The change kinds.
const (
	ChangeCapture   ChangeKind = "capture"   // a capture (or a counted use) was written
	ChangeCatalogue ChangeKind = "catalogue" // the catalogue was replaced: every classification may differ
	ChangeGrant     ChangeKind = "grant"     // durable auto-run granted
	ChangeRevoke    ChangeKind = "revoke"    // durable auto-run revoked
	ChangePromote   ChangeKind = "promote"   // another version made current
	ChangeRetire    ChangeKind = "retire"    // a procedure retired: no longer exposed
	ChangeUnretire  ChangeKind = "unretire"  // a retired procedure brought back
	ChangeDemote    ChangeKind = "demote"    // a procedure demoted by its failures: no longer exposed
	ChangeRestore   ChangeKind = "restore"   // a demotion lifted (a verification, an operator)
	// ChangeDrift: a version's drift changed without a catalogue change (an
	// operator accepted it, or a run under the current catalogue cleared it).
	// A catalogue change (ChangeCatalogue) may make any version stale.
	ChangeDrift ChangeKind = "drift"
	// ChangeApproval: a turn began to wait for an operator, or a waiting
	// turn changed state (resolved, run, expired, cancelled); Turn names it.
	ChangeApproval ChangeKind = "approval"
	// ChangeRemote: another instance changed the store (noticed by
	// procedures.Service.WatchRemote); what changed is not known.
	ChangeRemote ChangeKind = "remote"
	// ChangeLost: the subscriber fell behind and changes were dropped
	// (see Subscription); it should reread what it shows.
	ChangeLost ChangeKind = "lost"
)

// Change is one event of the change feed, published after its write
// committed. Like a decision record it names things, never values.
type Change struct {
	// Seq is the change's position in its feed: strictly increasing.
	Seq  uint64     `json:"seq"`
	Kind ChangeKind `json:"kind"`
	// Procedure is the procedure changed; "" for the catalogue, remote and lost.
	Procedure string `json:"procedure,omitempty"`
	// CodeHash is the version concerned (the catalogue's new revision).
	CodeHash string `json:"code_hash,omitempty"`
	// Decision is the id of the decision record that authorised it, if any.
	Decision string `json:"decision,omitempty"`
	// Turn is the turn concerned (ChangeApproval).
	Turn string    `json:"turn,omitempty"`
	At   time.Time `json:"at"`
}

// DefaultFeedBuffer is a subscription's default bound.
const DefaultFeedBuffer = 64

// ErrFeedClosed ends Next when the subscription or its feed is closed.
var ErrFeedClosed = errors.New("procedures: the change feed subscription is closed")

// Feed is the service's change feed, as OPA's storage triggers: the
// service publishes a typed Change after each write commits (never for a
// write that failed), and subscribers — MCP's list_changed, the console's
// event stream, another instance's watcher — consume it. Publishing never
// blocks: each subscription holds a bounded queue, and one that falls
// behind has its queue coalesced into a single ChangeLost. The feed starts
// no goroutine. It is safe for concurrent use.
type Feed struct {
	mu     sync.Mutex
	seq    uint64
	subs   map[*Subscription]struct{}
	closed bool
	now    func() time.Time
}

// NewFeed returns an empty feed.
func NewFeed() *Feed { return &Feed{subs: map[*Subscription]struct{}{}, now: time.Now} }

// Publish numbers c, stamps its time when unset, and queues it for every
// subscriber; it returns at once whatever the subscribers do. Publishing
// on a closed feed does nothing.
func (f *Feed) Publish(c Change) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.seq++
	c.Seq = f.seq
	if c.At.IsZero() {
		c.At = f.now().UTC()
	}
	for s := range f.subs {
		s.push(c)
	}
}

// Subscribe returns a subscription to the changes published from now on,
// holding at most buffer of them (DefaultFeedBuffer when buffer <= 0). On
// a closed feed the subscription is already closed. Close it when done.
func (f *Feed) Subscribe(buffer int) *Subscription {
	if buffer <= 0 {
		buffer = DefaultFeedBuffer
	}
	s := &Subscription{feed: f, max: buffer, ready: make(chan struct{}, 1), done: make(chan struct{})}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		close(s.done)
		return s
	}
	f.subs[s] = struct{}{}
	return s
}

// Seq returns the Seq of the last change published (0 before the first):
// a read that begins after Seq returned n sees every change up to n.
func (f *Feed) Seq() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seq
}

// Subscribers returns how many subscriptions are open.
func (f *Feed) Subscribers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.subs)
}

// Close closes every subscription; later publishes do nothing and later
// subscriptions start closed. It is safe to call more than once.
func (f *Feed) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.closed = true
	for s := range f.subs {
		delete(f.subs, s)
		close(s.done)
	}
}

// Subscription is one subscriber's bounded view of a Feed. Ready signals
// that changes wait; Take takes them. A subscription that lets more than
// its bound pile up loses them: its queue becomes one ChangeLost (whose
// Seq is the last change dropped), and changes published after that
// ChangeLost was taken are queued again as usual.
type Subscription struct {
	feed  *Feed
	max   int
	ready chan struct{} // holds a value while changes wait
	done  chan struct{} // closed when the subscription ends

	mu    sync.Mutex
	queue []Change
	lost  bool
}

// push queues c (called with the feed's lock held).
func (s *Subscription) push(c Change) {
	s.mu.Lock()
	switch {
	case s.lost:
		s.queue[0].Seq, s.queue[0].At = c.Seq, c.At
	case len(s.queue) == s.max:
		s.lost = true
		s.queue = append(s.queue[:0], Change{Seq: c.Seq, Kind: ChangeLost, At: c.At})
	default:
		s.queue = append(s.queue, c)
	}
	s.mu.Unlock()
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// Ready returns a channel that receives a value when changes are waiting.
func (s *Subscription) Ready() <-chan struct{} { return s.ready }

// Done returns a channel closed once the subscription or its feed is closed.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Take returns the changes waiting, oldest first, and empties the queue.
func (s *Subscription) Take() []Change {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.queue
	s.queue, s.lost = nil, false
	return out
}

// Next waits for changes and takes them. It returns ctx's error when ctx
// ends first and ErrFeedClosed once the subscription is closed (changes
// still waiting are returned before that).
func (s *Subscription) Next(ctx context.Context) ([]Change, error) {
	for {
		if cs := s.Take(); len(cs) > 0 {
			return cs, nil
		}
		select {
		case <-s.ready:
		case <-s.done:
			if cs := s.Take(); len(cs) > 0 {
				return cs, nil
			}
			return nil, ErrFeedClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Close ends the subscription: it leaves the feed and Done is closed. It
// is safe to call more than once and after the feed closed.
func (s *Subscription) Close() {
	f := s.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.subs[s]; ok {
		delete(f.subs, s)
		close(s.done)
	}
}
