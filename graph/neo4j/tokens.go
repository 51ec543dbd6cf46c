package neo4j

import (
	"context"
	"errors"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/tokens"
)

var _ tokens.Store = (*Store)(nil)

// tokenProps are a record's properties as token_put.cypher writes them.
func tokenProps(r auth.TokenRecord, rev int64) map[string]any {
	return map[string]any{"holder": r.Holder, "sha256": r.SHA256, "scopes": r.Scopes, "created_at": dbTime(r.CreatedAt),
		"created_by": r.CreatedBy, "expires_at": dbTimeOrNil(r.ExpiresAt), "last_used_at": dbTimeOrNil(r.LastUsedAt),
		"revoked_at": dbTimeOrNil(r.RevokedAt), "revision": rev}
}

// decodeToken reads a Token node's properties (nil: no record).
func decodeToken(v any) (*auth.TokenRecord, error) {
	m := asMap(v)
	if m == nil {
		return nil, nil
	}
	r := &row{m: m}
	out := &auth.TokenRecord{Holder: r.str("holder"), SHA256: r.str("sha256"), Scopes: r.strings("scopes"),
		CreatedAt: r.time("created_at"), CreatedBy: r.str("created_by"), ExpiresAt: r.time("expires_at"),
		LastUsedAt: r.time("last_used_at"), RevokedAt: r.time("revoked_at"), Revision: r.int("revision")}
	return out, r.err
}

// tokenWrite runs change in a write transaction after token_bump.cypher
// (the token lock, the next revision), then appends ds.
func tokenWrite[T any](ctx context.Context, s *Store, op string, ds []audit.Decision,
	change func(ctx context.Context, tx neo4j.ManagedTransaction, rev int64) (T, error)) (T, error) {
	var zero T
	params := make([]map[string]any, len(ds))
	for i, d := range ds {
		p, err := decisionParams(d)
		if err != nil {
			return zero, err
		}
		params[i] = p
	}
	return writeTx(ctx, s, op, func(ctx context.Context, tx neo4j.ManagedTransaction) (T, error) {
		recs, err := collect(ctx, tx, "token_bump", nil)
		if err != nil {
			return zero, err
		}
		if len(recs) != 1 {
			return zero, errRows("token_bump", len(recs))
		}
		rev, _ := field(recs[0], "revision").(int64)
		out, err := change(ctx, tx, rev)
		if err != nil {
			return zero, err
		}
		for _, p := range params {
			if err := appendDecision(ctx, tx, p); err != nil {
				return zero, err
			}
		}
		return out, nil
	})
}

// getToken returns holder's record and the holder of the record hashed
// sha256 ("" when none).
func getToken(ctx context.Context, tx neo4j.ManagedTransaction, holder, sha256 string) (*auth.TokenRecord, string, error) {
	recs, err := collect(ctx, tx, "token_get", map[string]any{"holder": holder, "sha256": sha256})
	if err != nil {
		return nil, "", err
	}
	if len(recs) != 1 {
		return nil, "", errRows("token_get", len(recs))
	}
	r, err := decodeToken(field(recs[0], "token"))
	hashHolder, _ := field(recs[0], "hash_holder").(string)
	return r, hashHolder, err
}

func putToken(ctx context.Context, tx neo4j.ManagedTransaction, r auth.TokenRecord, rev int64) (auth.TokenRecord, error) {
	recs, err := collect(ctx, tx, "token_put", map[string]any{"holder": r.Holder, "props": tokenProps(r, rev)})
	if err != nil {
		return auth.TokenRecord{}, err
	}
	if len(recs) != 1 {
		return auth.TokenRecord{}, errRows("token_put", len(recs))
	}
	out, err := decodeToken(field(recs[0], "token"))
	if err != nil || out == nil {
		return auth.TokenRecord{}, errors.Join(err, errRows("token_put", 0))
	}
	return *out, nil
}

func createToken(ctx context.Context, tx neo4j.ManagedTransaction, rec auth.TokenRecord, reuse bool, rev int64) (auth.TokenRecord, error) {
	old, hashHolder, err := getToken(ctx, tx, rec.Holder, rec.SHA256)
	if err != nil {
		return auth.TokenRecord{}, err
	}
	if old != nil && (old.RevokedAt.IsZero() || !reuse) {
		return auth.TokenRecord{}, fault.Errorf(fault.CodeConflict, "holder %q has a token already", rec.Holder)
	}
	if hashHolder != "" && hashHolder != rec.Holder {
		return auth.TokenRecord{}, fault.Errorf(fault.CodeConflict, "another holder has this token")
	}
	rec.RevokedAt, rec.LastUsedAt = time.Time{}, time.Time{}
	return putToken(ctx, tx, rec, rev)
}

// CreateToken stores rec and appends d, in one transaction (see
// tokens.Store).
func (s *Store) CreateToken(ctx context.Context, rec auth.TokenRecord, reuse bool, d audit.Decision) (auth.TokenRecord, error) {
	return tokenWrite(ctx, s, "create token", []audit.Decision{d}, func(ctx context.Context, tx neo4j.ManagedTransaction, rev int64) (auth.TokenRecord, error) {
		return createToken(ctx, tx, rec, reuse, rev)
	})
}

// RotateToken replaces the holder's live record whose hash is oldHash by
// rec and appends d, in one transaction (see tokens.Store).
func (s *Store) RotateToken(ctx context.Context, oldHash string, rec auth.TokenRecord, d audit.Decision) (auth.TokenRecord, error) {
	return tokenWrite(ctx, s, "rotate token", []audit.Decision{d}, func(ctx context.Context, tx neo4j.ManagedTransaction, rev int64) (auth.TokenRecord, error) {
		old, hashHolder, err := getToken(ctx, tx, rec.Holder, rec.SHA256)
		switch {
		case err != nil:
			return auth.TokenRecord{}, err
		case old == nil || !old.RevokedAt.IsZero():
			return auth.TokenRecord{}, fault.Errorf(fault.CodeNotFound, "no live token of holder %q", rec.Holder)
		case old.SHA256 != oldHash:
			return auth.TokenRecord{}, fault.Errorf(fault.CodeConflict, "the token of holder %q changed meanwhile", rec.Holder)
		case hashHolder != "":
			return auth.TokenRecord{}, fault.Errorf(fault.CodeConflict, "another holder has this token")
		}
		rec.RevokedAt, rec.LastUsedAt = time.Time{}, time.Time{}
		return putToken(ctx, tx, rec, rev)
	})
}

// RevokeToken marks the holder's live record revoked and appends d, in one
// transaction (see tokens.Store).
func (s *Store) RevokeToken(ctx context.Context, holder string, at time.Time, d audit.Decision) (auth.TokenRecord, error) {
	return tokenWrite(ctx, s, "revoke token", []audit.Decision{d}, func(ctx context.Context, tx neo4j.ManagedTransaction, rev int64) (auth.TokenRecord, error) {
		old, _, err := getToken(ctx, tx, holder, "")
		if err != nil {
			return auth.TokenRecord{}, err
		}
		if old == nil || !old.RevokedAt.IsZero() {
			return auth.TokenRecord{}, fault.Errorf(fault.CodeNotFound, "no live token of holder %q", holder)
		}
		old.RevokedAt = at
		return putToken(ctx, tx, *old, rev)
	})
}

// errNotFirst rolls back a CreateFirstTokens that found the store holding
// tokens.
var errNotFirst = errors.New("the store holds tokens")

// CreateFirstTokens stores recs and appends ds when the store has never
// held a token (see tokens.Store).
func (s *Store) CreateFirstTokens(ctx context.Context, recs []auth.TokenRecord, ds []audit.Decision) (bool, error) {
	_, err := tokenWrite(ctx, s, "create first tokens", ds, func(ctx context.Context, tx neo4j.ManagedTransaction, rev int64) (bool, error) {
		if rev != 1 {
			return false, errNotFirst
		}
		for _, r := range recs {
			if _, err := createToken(ctx, tx, r, false, rev); err != nil {
				return false, err
			}
		}
		return true, nil
	})
	if errors.Is(err, errNotFirst) {
		return false, nil
	}
	return err == nil, err
}

// Token returns holder's record, nil when there is none (see
// tokens.Store).
func (s *Store) Token(ctx context.Context, holder string) (*auth.TokenRecord, error) {
	recs, err := query(ctx, s, "token", neo4j.AccessModeRead, "token_get", map[string]any{"holder": holder, "sha256": ""})
	if err != nil {
		return nil, err
	}
	if len(recs) != 1 {
		return nil, s.mapError("token", errRows("token_get", len(recs)))
	}
	r, err := decodeToken(field(recs[0], "token"))
	if err != nil {
		return nil, s.mapError("token", err)
	}
	return r, nil
}

// TokensSince returns the token records changed after revision rev (all
// for 0) and the current token revision (see auth.TokenSource): one read.
func (s *Store) TokensSince(ctx context.Context, rev int64) ([]auth.TokenRecord, int64, error) {
	recs, err := query(ctx, s, "tokens since", neo4j.AccessModeRead, "token_since", map[string]any{"since": rev})
	if err != nil {
		return nil, 0, err
	}
	if len(recs) != 1 {
		return nil, 0, s.mapError("tokens since", errRows("token_since", len(recs)))
	}
	cur, _ := field(recs[0], "revision").(int64)
	var out []auth.TokenRecord
	for _, v := range asList(field(recs[0], "tokens")) {
		r, err := decodeToken(v)
		if err != nil {
			return nil, 0, s.mapError("tokens since", err)
		}
		if r != nil {
			out = append(out, *r)
		}
	}
	return out, cur, nil
}

// TouchTokens sets the last use of the tokens of the given hashes (never
// back), changing no revision (see auth.TokenSource).
func (s *Store) TouchTokens(ctx context.Context, used map[string]time.Time) error {
	list := make([]any, 0, len(used))
	for h, at := range used {
		list = append(list, map[string]any{"sha256": h, "at": dbTime(at)})
	}
	_, err := query(ctx, s, "touch tokens", neo4j.AccessModeWrite, "token_touch", map[string]any{"used": list})
	return err
}
