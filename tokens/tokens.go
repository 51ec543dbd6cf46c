// Package tokens manages the bearer tokens a store keeps (docs/design.md
// "Tokens in the store"): the narrow Store interface both stores
// implement, and the Manager that creates, lists, rotates, revokes and
// imports tokens, each change audited (kind token: holder, scopes, expiry
// and who; never the token). Checking a request's token is auth's
// (auth.NewStoreAuthenticator over the same store).
package tokens

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
)

// Store keeps token records (hashes, never tokens). Every change bumps the
// store's token revision by one and gives the records it wrote that
// revision, and commits its audit record d in the same transaction.
type Store interface {
	auth.TokenSource
	// Token returns holder's record (revoked or not), nil when there is
	// none.
	Token(ctx context.Context, holder string) (*auth.TokenRecord, error)
	// CreateToken stores rec. A holder with a live record, or a revoked
	// one unless reuse, or a hash another record holds, is a
	// fault.CodeConflict and nothing is written.
	CreateToken(ctx context.Context, rec auth.TokenRecord, reuse bool, d audit.Decision) (auth.TokenRecord, error)
	// RotateToken replaces the live record of rec.Holder, whose hash must
	// still be oldHash (else fault.CodeConflict), by rec; no live record
	// is fault.CodeNotFound.
	RotateToken(ctx context.Context, oldHash string, rec auth.TokenRecord, d audit.Decision) (auth.TokenRecord, error)
	// RevokeToken marks holder's live record revoked at at; no live record
	// is fault.CodeNotFound.
	RevokeToken(ctx context.Context, holder string, at time.Time, d audit.Decision) (auth.TokenRecord, error)
	// CreateFirstTokens stores recs, with ds, only when the store has never
	// held a token record; it reports whether it did.
	CreateFirstTokens(ctx context.Context, recs []auth.TokenRecord, ds []audit.Decision) (bool, error)
}

// Manager creates, lists, rotates, revokes and imports the tokens of a
// Store, recording each change with the Recorder.
type Manager struct {
	store Store
	rec   *procedures.Recorder
	now   func() time.Time
}

// NewManager returns the Manager of s, recording with rec.
func NewManager(s Store, rec *procedures.Recorder) *Manager {
	return &Manager{store: s, rec: rec, now: time.Now}
}

// CreateRequest is a token to create: its holder, scopes, expiry (zero:
// never) and who asks.
type CreateRequest struct {
	Holder    string
	Scopes    []string
	ExpiresAt time.Time
	Actor     string
}

// Created is a token just made: the token itself, shown once, and its
// record.
type Created struct {
	Token  string
	Record auth.TokenRecord
}

// Check checks a holder name and scopes as the tokens file does (a holder
// is 1-64 of [A-Za-z0-9_.@-], scopes known and not empty); the scopes come
// back deduplicated in auth.AllScopes' order.
func Check(holder string, scopes []string) ([]string, error) {
	f := auth.TokensFile{Tokens: []auth.TokenEntry{{Name: holder, SHA256: strings.Repeat("0", 64), Scopes: scopes}}}
	if err := f.Validate(); err != nil {
		return nil, fault.Errorf(fault.CodeInvalid, "%s", strings.TrimPrefix(err.Error(), "tokens[0]"))
	}
	var out []string
	for _, s := range auth.AllScopes {
		if slices.Contains(scopes, string(s)) {
			out = append(out, string(s))
		}
	}
	return out, nil
}

// Create makes a new token for r.Holder and stores its hash. A holder
// whose token was revoked may be given a new one.
func (m *Manager) Create(ctx context.Context, r CreateRequest) (Created, error) {
	scopes, err := Check(r.Holder, r.Scopes)
	if err != nil {
		return Created{}, err
	}
	now := m.now().UTC().Truncate(time.Millisecond)
	if !r.ExpiresAt.IsZero() && !r.ExpiresAt.After(now) {
		return Created{}, fault.Errorf(fault.CodeInvalid, "the expiry must be in the future")
	}
	tok, err := auth.NewToken()
	if err != nil {
		return Created{}, err
	}
	rec := auth.TokenRecord{Holder: r.Holder, SHA256: auth.HashToken(tok), Scopes: scopes, CreatedAt: now,
		CreatedBy: r.Actor, ExpiresAt: r.ExpiresAt.UTC().Truncate(time.Millisecond)}
	var stored auth.TokenRecord
	_, err = m.rec.RecordWith(Decision(audit.ReasonTokenCreated, r.Actor, rec), func(d audit.Decision) (err error) {
		stored, err = m.store.CreateToken(ctx, rec, true, d)
		return err
	})
	if err != nil {
		return Created{}, err
	}
	return Created{Token: tok, Record: stored}, nil
}

// List returns every token record (revoked ones included), by holder.
func (m *Manager) List(ctx context.Context) ([]auth.TokenRecord, error) {
	recs, _, err := m.store.TokensSince(ctx, 0)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(recs, func(a, b auth.TokenRecord) int { return strings.Compare(a.Holder, b.Holder) })
	return recs, nil
}

// live returns holder's live (unrevoked) record.
func (m *Manager) live(ctx context.Context, holder string) (auth.TokenRecord, error) {
	r, err := m.store.Token(ctx, holder)
	if err != nil {
		return auth.TokenRecord{}, err
	}
	if r == nil || !r.RevokedAt.IsZero() {
		return auth.TokenRecord{}, fault.Errorf(fault.CodeNotFound, "no live token of holder %q", holder)
	}
	return *r, nil
}

// Rotate gives holder a new token in place of its live one, with the same
// scopes; expiresAt, when not zero, is its new expiry, else it keeps the
// old one. The old token is refused from then on.
func (m *Manager) Rotate(ctx context.Context, holder string, expiresAt time.Time, actor string) (Created, error) {
	old, err := m.live(ctx, holder)
	if err != nil {
		return Created{}, err
	}
	now := m.now().UTC().Truncate(time.Millisecond)
	exp := old.ExpiresAt
	if !expiresAt.IsZero() {
		exp = expiresAt.UTC().Truncate(time.Millisecond)
	}
	if !exp.IsZero() && !exp.After(now) {
		return Created{}, fault.Errorf(fault.CodeInvalid, "the expiry must be in the future (give --expires)")
	}
	tok, err := auth.NewToken()
	if err != nil {
		return Created{}, err
	}
	rec := auth.TokenRecord{Holder: holder, SHA256: auth.HashToken(tok), Scopes: slices.Clone(old.Scopes), CreatedAt: now,
		CreatedBy: actor, ExpiresAt: exp}
	var stored auth.TokenRecord
	_, err = m.rec.RecordWith(Decision(audit.ReasonTokenRotated, actor, rec), func(d audit.Decision) (err error) {
		stored, err = m.store.RotateToken(ctx, old.SHA256, rec, d)
		return err
	})
	if err != nil {
		return Created{}, err
	}
	return Created{Token: tok, Record: stored}, nil
}

// Revoke revokes holder's live token: every instance sharing the store
// refuses it within auth.SyncEvery.
func (m *Manager) Revoke(ctx context.Context, holder, actor string) (auth.TokenRecord, error) {
	old, err := m.live(ctx, holder)
	if err != nil {
		return auth.TokenRecord{}, err
	}
	var stored auth.TokenRecord
	_, err = m.rec.RecordWith(Decision(audit.ReasonTokenRevoked, actor, old), func(d audit.Decision) (err error) {
		stored, err = m.store.RevokeToken(ctx, holder, m.now().UTC().Truncate(time.Millisecond), d)
		return err
	})
	return stored, err
}

// Imported is what Import did with a tokens file.
type Imported struct {
	// Added are the holders added to the store.
	Added []string
	// Kept are the holders the store already held with another token
	// (rotated or revoked there): the store's record stays in effect.
	Kept []string
}

// Import adds the entries of a tokens file whose holder the store has
// never held; an entry the store holds with the same hash is left as it
// is, and one it holds with another (a token rotated or revoked since)
// is not used: the store's record wins, so a token revoked in the store
// stays revoked whatever the file says.
func (m *Manager) Import(ctx context.Context, f *auth.TokensFile, actor string) (Imported, error) {
	var out Imported
	recs, err := m.List(ctx)
	if err != nil {
		return out, err
	}
	byHolder := map[string]auth.TokenRecord{}
	for _, r := range recs {
		byHolder[r.Holder] = r
	}
	now := m.now().UTC().Truncate(time.Millisecond)
	for _, e := range f.Tokens {
		if r, ok := byHolder[e.Name]; ok {
			if r.SHA256 != e.SHA256 || !r.RevokedAt.IsZero() {
				out.Kept = append(out.Kept, e.Name)
			}
			continue
		}
		scopes, err := Check(e.Name, e.Scopes)
		if err != nil {
			return out, err
		}
		rec := auth.TokenRecord{Holder: e.Name, SHA256: e.SHA256, Scopes: scopes, CreatedAt: now, CreatedBy: actor}
		_, err = m.rec.RecordWith(Decision(audit.ReasonTokenImported, actor, rec), func(d audit.Decision) error {
			_, err := m.store.CreateToken(ctx, rec, false, d)
			return err
		})
		if fault.ErrorCode(err) == fault.CodeConflict {
			out.Kept = append(out.Kept, e.Name) // another instance imported or created it meanwhile
			continue
		}
		if err != nil {
			return out, err
		}
		out.Added = append(out.Added, e.Name)
	}
	return out, nil
}

// FirstHolder is one of the tokens a store's first start creates.
type FirstHolder struct {
	Holder string
	Scopes []auth.Scope
}

// First creates the first tokens of a store that has never held one (one
// per holder, audited with actor procgraph) and returns them by holder;
// nil when the store holds tokens already (another instance's first start
// won, or they were made otherwise).
func (m *Manager) First(ctx context.Context, holders []FirstHolder) (map[string]string, error) {
	now := m.now().UTC().Truncate(time.Millisecond)
	out := map[string]string{}
	var recs []auth.TokenRecord
	var ds []audit.Decision
	for _, h := range holders {
		tok, err := auth.NewToken()
		if err != nil {
			return nil, err
		}
		rec := auth.TokenRecord{Holder: h.Holder, SHA256: auth.HashToken(tok), CreatedAt: now, CreatedBy: audit.ActorProcgraph}
		for _, s := range h.Scopes {
			rec.Scopes = append(rec.Scopes, string(s))
		}
		d, err := m.rec.Build(Decision(audit.ReasonTokenCreated, audit.ActorProcgraph, rec))
		if err != nil {
			return nil, err
		}
		out[h.Holder] = tok
		recs, ds = append(recs, rec), append(ds, d)
	}
	created, err := m.store.CreateFirstTokens(ctx, recs, ds)
	if err != nil || !created {
		return nil, err
	}
	return out, nil
}

// Decision is the audit record of a change of rec's token (reason one of
// procedures' ReasonToken…) by actor: the holder, scopes and expiry in
// its note; never the token or its hash.
func Decision(reason, actor string, rec auth.TokenRecord) audit.Decision {
	note := fmt.Sprintf("holder %s; scopes %s", rec.Holder, strings.Join(rec.Scopes, ","))
	if !rec.ExpiresAt.IsZero() {
		note += "; expires " + rec.ExpiresAt.UTC().Format(time.RFC3339)
	}
	return audit.Decision{Kind: audit.KindToken, Outcome: audit.Allowed, Reason: reason, Actor: actor, Note: note}
}
