package procedures

import (
	"context"
	"sync"
	"time"

	"github.com/procgraph/procgraph/changes"
	"github.com/procgraph/procgraph/internal/cache"
)

// The authorization cache: what this service read of each procedure — as
// the store answered it (what a grant or revoke prepares its write with,
// what tells a capture whether its procedure was exposed), and what a
// grant's cover found for it (GrantedProgramOf) — the catalogue a view
// classifies with (newView), and, through the epoch a block is classified
// at (Classified.AuthEpoch), the gate's index of session policies. One
// rule says how long all of it is trusted (docs/design.md "How long a
// cached authorization is trusted"; ADR 0052):
//
//   - The store keeps an authorization revision (Store.AuthRevision) that
//     every write which can change what a grant or a policy decides moves,
//     in its own transaction, whichever instance made it.
//   - One poller per process (watchAuthorization, run by WatchRemote,
//     which cmd/procgraph starts once) reads it every interval
//     (authPollEvery); when it moved, everything cached is dropped at
//     once (the epoch moves). An entry is trusted
//     while the epoch it was read at is current: a revoke or a policy
//     deleted on another instance is honoured here after the next poll, one
//     interval at most.
//   - Fail closed: while the poller has not read the revision for
//     authStaleAfter intervals (or never has), no grant look, policy list
//     or catalogue is trusted: each turn reads the store, as without a
//     cache.
//   - This service's own writes go through at once: the change feed
//     (drain) leaves a tombstone on the procedure a change concerns (every
//     procedure for a change without one: a catalogue, another instance's,
//     lost changes), and the gate drops a session's policies when it writes
//     one of them. A read begun before a change it did not see is not kept.
//
// What a write is prepared with (known) need not be current: the write
// checks the code hash and the catalogue in its own statement, so a stale
// entry costs the read it saved; it is dropped with the rest all the same.

// authPollEvery is how often watchAuthorization reads the store's
// authorization revision.
const authPollEvery = time.Second

// authStaleAfter is how many poll intervals may pass without a successful
// read of the revision before nothing cached is trusted.
const authStaleAfter = 3

// maxAuthBytes bounds what the authorization cache keeps, by the bytes of
// code and signatures of its procedures (authEntry.cost).
const maxAuthBytes = 8 << 20

// authCache is the service's authorization cache (see above). Every field
// is guarded by mu.
type authCache struct {
	feed *changes.Feed
	sub  *changes.Subscription
	mu   sync.Mutex
	// epoch moves whenever everything cached is dropped (invalidate).
	epoch uint64
	// rev is the store's revision the poller read last, at polledAt;
	// polled is false until it read one.
	rev      uint64
	polled   bool
	polledAt time.Time
	// every is the poller's interval (authPollEvery unless
	// watchAuthorization was given another).
	every time.Duration
	// global is the Seq of the last change concerning every procedure.
	global  uint64
	entries *cache.Cache[string, authEntry]
	// cat is the catalogue read after the feed's Seq was catSeq at
	// catEpoch (nil: none).
	cat              *Catalogue
	catSeq, catEpoch uint64
}

// authEntry is what the cache holds of one procedure: p, as the store
// answered it last (nil when not kept); and, when looked, what
// GrantedProgramOf found under catalogue revision rev (gp, nil when no
// active grant), read after the feed's Seq was seq at epoch — or, when
// tomb, that a change seq of this service concerned it since.
type authEntry struct {
	p      *Procedure
	looked bool
	rev    string
	gp     *GrantedProgram
	seq    uint64
	epoch  uint64
	tomb   bool
}

// cost is what an entry weighs against maxAuthBytes.
func (e authEntry) cost(name string) int {
	n := len(name) + 64
	if e.p != nil {
		n += len(e.p.Code) + len(e.p.Summary) + 256
		for _, s := range e.p.Signature {
			n += len(s)
		}
	}
	if e.gp != nil {
		n += 2*len(e.gp.Procedure.Code) + 1024
	}
	return n
}

func newAuthEntries() *cache.Cache[string, authEntry] {
	return cache.NewWeighted(maxAuthBytes, func(name string, e authEntry) int { return e.cost(name) })
}

func newAuthCache(f *changes.Feed) *authCache {
	return &authCache{feed: f, sub: f.Subscribe(changes.DefaultFeedBuffer), every: authPollEvery, entries: newAuthEntries()}
}

// fresh reports whether what the cache holds may be trusted at now (mu
// held): the poller read the revision at most authStaleAfter intervals
// before.
func (x *authCache) fresh(now time.Time) bool {
	return x.polled && !now.Before(x.polledAt) && now.Sub(x.polledAt) <= authStaleAfter*x.every
}

// invalidate drops everything cached (mu held): the epoch moves, so no
// read begun before is kept either.
func (x *authCache) invalidate() {
	x.epoch++
	x.entries = newAuthEntries()
	x.cat = nil
}

// drain takes the changes published since the last look (mu held): a
// change of a procedure leaves a tombstone on its grant look, unless it is
// a capture that counted the current version of a granted one (nothing its
// grant depends on changed); any other change without a procedure but an
// approval concerns every procedure.
func (x *authCache) drain() {
	for _, c := range x.sub.Take() {
		switch {
		case c.Kind == changes.ChangeApproval:
		case c.Procedure == "":
			x.global = c.Seq
		default:
			e, ok := x.entries.Get(c.Procedure)
			if ok && c.Kind == changes.ChangeCapture && e.looked && e.gp != nil && !e.tomb && e.gp.Procedure.CodeHash == c.CodeHash {
				continue
			}
			e.seq, e.tomb = c.Seq, true
			x.entries.Add(c.Procedure, e)
		}
	}
}

// remember keeps p, as the store answered it (before decorate: decorate
// writes only p's own fields, so the copy kept is unchanged by it), to
// prepare a write with.
func (x *authCache) remember(p *Procedure) {
	if p == nil || p.Name == "" {
		return
	}
	cp := *p
	x.mu.Lock()
	defer x.mu.Unlock()
	e, _ := x.entries.Get(p.Name)
	e.p = &cp
	x.entries.Add(p.Name, e)
}

// get is a copy of what was kept of procedure name (nil when nothing), to
// decorate.
func (x *authCache) get(name string) *Procedure {
	x.mu.Lock()
	e, ok := x.entries.Get(name)
	x.mu.Unlock()
	if !ok || e.p == nil {
		return nil
	}
	cp := *e.p
	return &cp
}

// granted is the grant look of name under catalogue revision rev at now,
// when trusted (found); else it returns the feed's Seq and the epoch to
// read it after (keep).
func (x *authCache) granted(name, rev string, now time.Time) (gp *GrantedProgram, found bool, seq, epoch uint64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.drain()
	if e, ok := x.entries.Get(name); ok && e.looked && !e.tomb && e.seq >= x.global && e.rev == rev && e.epoch == x.epoch && x.fresh(now) {
		return e.gp, true, 0, 0
	}
	return nil, false, x.feed.Seq(), x.epoch
}

// keep stores gp as the grant look of name under catalogue revision rev,
// read after the feed's Seq was seq at epoch, unless something it did not
// see changed meanwhile.
func (x *authCache) keep(name, rev string, gp *GrantedProgram, seq, epoch uint64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.drain()
	cur, ok := x.entries.Get(name)
	if epoch != x.epoch || seq < x.global || (ok && cur.seq > seq) {
		return
	}
	cur.looked, cur.rev, cur.gp, cur.seq, cur.epoch, cur.tomb = true, rev, gp, seq, epoch, false
	x.entries.Add(name, cur)
}

// catalogue is the catalogue a view classifies with: the one cached while
// it is trusted at now (nothing this service published since it was read
// concerns every procedure, as a catalogue change does), else read from the
// store and kept.
func (s *Service) catalogue(ctx context.Context) (*Catalogue, error) {
	x := s.auth
	x.mu.Lock()
	x.drain()
	if x.cat != nil && x.catSeq >= x.global && x.catEpoch == x.epoch && x.fresh(s.opts.Now()) {
		cat := x.cat
		x.mu.Unlock()
		return cat, nil
	}
	seq, epoch := x.feed.Seq(), x.epoch
	x.mu.Unlock()
	cat, err := s.store.Catalogue(ctx)
	if err != nil {
		return nil, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.drain()
	if epoch == x.epoch && seq >= x.global {
		x.cat, x.catSeq, x.catEpoch = cat, seq, epoch
	}
	return cat, nil
}

// authEpoch is the authorization cache's epoch, which moves whenever what
// it holds is dropped, when what was read at it may be trusted now (the
// poller read the store's authorization revision recently enough); 0 when
// nothing may be (epochs start at 1 with the first poll). ClassifyBlock
// gives it to the gate (Classified.AuthEpoch), which keeps a session's
// policies under the epoch it read them at.
func (s *Service) authEpoch() uint64 {
	x := s.auth
	now := s.opts.Now()
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.fresh(now) {
		return 0
	}
	return x.epoch
}

// PollAuthorization reads the store's authorization revision once: when
// it moved since the last read (or on the first), everything the
// authorization cache holds is dropped; either way what is read from now
// is trusted for authStaleAfter intervals. A failed read changes nothing
// (and is returned): once reads have failed for that long, nothing is
// trusted. The poller (watchAuthorization) calls it every interval;
// tests call it to tick.
func (s *Service) PollAuthorization(ctx context.Context) error {
	x := s.auth
	at := s.opts.Now()
	rev, err := s.store.AuthRevision(ctx)
	if err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.polled || rev != x.rev {
		x.invalidate()
	}
	x.rev, x.polled = rev, true
	if at.After(x.polledAt) {
		x.polledAt = at
	}
	return nil
}

// watchAuthorization is the process's one poller of the store's
// authorization revision (PollAuthorization every interval), until ctx
// ends; WatchRemote, started once per process by cmd/procgraph, runs it.
// Without it nothing cached is trusted and every turn reads its policies,
// its grants and its catalogue from the store.
func (s *Service) watchAuthorization(ctx context.Context, interval time.Duration) {
	s.auth.mu.Lock()
	s.auth.every = interval
	s.auth.mu.Unlock()
	_ = s.PollAuthorization(ctx)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		_ = s.PollAuthorization(ctx) // a failed read is the bound's to judge
	}
}
