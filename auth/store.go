package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"sync"
	"sync/atomic"
	"time"

	"github.com/procgraph/procgraph/fault"
)

// TokenRecord is a token as a store keeps it (docs/design.md "Tokens in
// the store"): its holder, the sha256 hex of the token (never the token),
// its scopes, who created it and when, when it was last used (written at
// most once every UseWriteEvery), when it expires (zero: never) and when
// it was revoked (zero: live). Revision is the store's token revision of
// the record's last change (TokenSource.TokensSince).
type TokenRecord struct {
	Holder     string
	SHA256     string
	Scopes     []string
	CreatedAt  time.Time
	CreatedBy  string
	ExpiresAt  time.Time
	LastUsedAt time.Time
	RevokedAt  time.Time
	Revision   int64
}

// Live reports whether r is neither revoked nor expired at now.
func (r TokenRecord) Live(now time.Time) bool {
	return r.RevokedAt.IsZero() && (r.ExpiresAt.IsZero() || now.Before(r.ExpiresAt))
}

// TokenSource is what an Authenticator reads of a store's tokens: the
// records changed since a token revision, and the last uses it writes.
type TokenSource interface {
	// TokensSince returns every token record whose revision is above rev
	// (all of them for 0), revoked ones included, and the store's current
	// token revision.
	TokensSince(ctx context.Context, rev int64) ([]TokenRecord, int64, error)
	// TouchTokens sets the last use of the tokens of the given hashes to
	// the given times (never back); it changes no revision.
	TouchTokens(ctx context.Context, used map[string]time.Time) error
}

// SyncEvery is how long a store-backed Authenticator trusts its copy of
// the store's tokens: a request that finds it older first reads what
// changed (one store read, shared by the requests that wait for it), so a
// token revoked on any instance is refused everywhere within SyncEvery.
const SyncEvery = time.Second

// UseWriteEvery is how often a token's last use is written at most.
const UseWriteEvery = time.Minute

// StoreOptions configure NewStoreAuthenticator; zero values are the
// defaults.
type StoreOptions struct {
	// Now returns the current time; time.Now when nil.
	Now func() time.Time
}

// liveToken is one live token of the store in memory.
type liveToken struct {
	hash      [32]byte
	principal Principal
	expires   time.Time
	// written is when its last use was last queued to be written (unix
	// nanoseconds).
	written atomic.Int64
}

// liveTokens is a store's tokens in memory: every live token by its
// hash, the hash of each holder's, and the store revision they are at.
type liveTokens struct {
	src TokenSource
	now func() time.Time

	mu       sync.RWMutex
	byHash   map[[32]byte]*liveToken
	byHolder map[string][32]byte
	rev      int64
	synced   time.Time // when the last read of the store began

	syncMu sync.Mutex // one read of the store at a time

	usedMu sync.Mutex
	used   map[string]time.Time // hash hex → last use, to be written
}

// NewStoreAuthenticator returns an authenticator of the tokens src
// keeps, read once now (an error when the store cannot be read) and again
// whenever a request finds the copy older than SyncEvery. Auth is on
// whatever the store holds: a store without a live token refuses every
// token.
func NewStoreAuthenticator(ctx context.Context, src TokenSource, o StoreOptions) (*Authenticator, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	l := &liveTokens{src: src, now: o.Now, byHash: map[[32]byte]*liveToken{}, byHolder: map[string][32]byte{},
		used: map[string]time.Time{}}
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	if err := l.sync(ctx); err != nil {
		return nil, err
	}
	return &Authenticator{live: l}, nil
}

// check returns the principal of the token whose hash is sum.
func (l *liveTokens) check(ctx context.Context, sum [32]byte) (Principal, error) {
	if err := l.fresh(ctx); err != nil {
		return Principal{}, err
	}
	l.mu.RLock()
	t := l.byHash[sum]
	l.mu.RUnlock()
	if t == nil || subtle.ConstantTimeCompare(sum[:], t.hash[:]) != 1 {
		return Principal{}, fault.Errorf(fault.CodeUnauthorized, "the bearer token is not valid")
	}
	now := l.now()
	if !t.expires.IsZero() && !now.Before(t.expires) {
		return Principal{}, fault.Errorf(fault.CodeUnauthorized, "the bearer token has expired")
	}
	l.use(t, now)
	return t.principal, nil
}

// fresh brings the copy up to date when it is SyncEvery old or older.
func (l *liveTokens) fresh(ctx context.Context) error {
	if l.current() {
		return nil
	}
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	if l.current() {
		return nil // another request read it meanwhile
	}
	return l.sync(ctx)
}

func (l *liveTokens) current() bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.now().Sub(l.synced) < SyncEvery
}

// sync reads what changed in the store since the copy's revision and
// applies it (everything again when the store's revision went back: a
// store restored or emptied). The caller holds syncMu. An error leaves
// the copy stale, so the next request tries again: nothing is accepted
// on a copy the store could not confirm.
func (l *liveTokens) sync(ctx context.Context) error {
	began := l.now()
	l.mu.RLock()
	since := l.rev
	l.mu.RUnlock()
	recs, rev, err := l.src.TokensSince(ctx, since)
	if err != nil {
		return fault.Errorf(fault.CodeUnavailable, "the tokens could not be read from the store: %s", fault.ErrorMessage(err))
	}
	full := rev < since
	if full {
		if recs, rev, err = l.src.TokensSince(ctx, 0); err != nil {
			return fault.Errorf(fault.CodeUnavailable, "the tokens could not be read from the store: %s", fault.ErrorMessage(err))
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if full {
		l.byHash, l.byHolder = map[[32]byte]*liveToken{}, map[string][32]byte{}
	}
	for _, r := range recs {
		if old, ok := l.byHolder[r.Holder]; ok {
			delete(l.byHash, old)
			delete(l.byHolder, r.Holder)
		}
		if !r.RevokedAt.IsZero() {
			continue
		}
		raw, err := hex.DecodeString(r.SHA256)
		if err != nil || len(raw) != sha256.Size {
			continue // not a hash: no token matches it
		}
		var h [32]byte
		copy(h[:], raw)
		t := &liveToken{hash: h, expires: r.ExpiresAt, principal: Principal{Name: r.Holder, Scopes: map[Scope]bool{}}}
		for _, s := range r.Scopes {
			t.principal.Scopes[Scope(s)] = true
		}
		t.written.Store(r.LastUsedAt.UnixNano())
		l.byHash[h], l.byHolder[r.Holder] = t, h
	}
	l.rev, l.synced = rev, began
	return nil
}

// use queues t's last use to be written when the last one queued is
// UseWriteEvery old: no request writes to the store.
func (l *liveTokens) use(t *liveToken, now time.Time) {
	last := t.written.Load()
	if now.UnixNano()-last < int64(UseWriteEvery) || !t.written.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	l.usedMu.Lock()
	l.used[hex.EncodeToString(t.hash[:])] = now
	l.usedMu.Unlock()
}

// FlushUses writes the last uses queued since the last flush (a store's
// authenticator; nothing otherwise). Serve calls it every few seconds and
// when it stops.
func (a *Authenticator) FlushUses(ctx context.Context) error {
	if a == nil || a.live == nil {
		return nil
	}
	l := a.live
	l.usedMu.Lock()
	used := l.used
	l.used = map[string]time.Time{}
	l.usedMu.Unlock()
	if len(used) == 0 {
		return nil
	}
	return l.src.TouchTokens(ctx, used)
}

// Tokens reports how many live tokens the authenticator holds.
func (a *Authenticator) Tokens() int {
	if a == nil {
		return 0
	}
	if a.live == nil {
		return len(a.entries)
	}
	a.live.mu.RLock()
	defer a.live.mu.RUnlock()
	return len(a.live.byHash)
}
