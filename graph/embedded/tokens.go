package embedded

import (
	"context"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/tokens"
)

var _ tokens.Store = (*Store)(nil)

// tokenRecord is an auth.TokenRecord as stored: times in Unix
// milliseconds (0: none), the hash, never the token.
type tokenRecord struct {
	Holder    string   `json:"holder"`
	SHA256    string   `json:"sha256"`
	Scopes    []string `json:"scopes"`
	CreatedAt int64    `json:"created_at"`
	CreatedBy string   `json:"created_by"`
	ExpiresAt int64    `json:"expires_at,omitempty"`
	LastUsed  int64    `json:"last_used_at,omitempty"`
	RevokedAt int64    `json:"revoked_at,omitempty"`
	Revision  uint64   `json:"revision"`
}

func msOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return ms(t)
}

func timeOrZero(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return fromMs(v)
}

func (r tokenRecord) record() auth.TokenRecord {
	return auth.TokenRecord{Holder: r.Holder, SHA256: r.SHA256, Scopes: r.Scopes, CreatedAt: fromMs(r.CreatedAt),
		CreatedBy: r.CreatedBy, ExpiresAt: timeOrZero(r.ExpiresAt), LastUsedAt: timeOrZero(r.LastUsed),
		RevokedAt: timeOrZero(r.RevokedAt), Revision: int64(r.Revision)}
}

func storedToken(r auth.TokenRecord) tokenRecord {
	return tokenRecord{Holder: r.Holder, SHA256: r.SHA256, Scopes: r.Scopes, CreatedAt: ms(r.CreatedAt), CreatedBy: r.CreatedBy,
		ExpiresAt: msOrZero(r.ExpiresAt), LastUsed: msOrZero(r.LastUsedAt), RevokedAt: msOrZero(r.RevokedAt)}
}

func getToken(tx *bolt.Tx, holder string) (*tokenRecord, error) {
	raw := tx.Bucket(bTokens).Get([]byte(holder))
	if raw == nil {
		return nil, nil
	}
	var r tokenRecord
	if err := decode(raw, &r, "token"); err != nil {
		return nil, err
	}
	return &r, nil
}

// putToken writes r under the next token revision, replacing what the
// holder's record was (old, nil when none) in the hash and revision
// indexes.
func putToken(tx *bolt.Tx, old *tokenRecord, r tokenRecord) (auth.TokenRecord, error) {
	meta := tx.Bucket(bMeta)
	rev := getU64(meta.Get(metaTokenRevision)) + 1
	if err := meta.Put(metaTokenRevision, u64(rev)); err != nil {
		return auth.TokenRecord{}, err
	}
	if old != nil {
		if err := tx.Bucket(bTokenRevs).Delete(u64(old.Revision)); err != nil {
			return auth.TokenRecord{}, err
		}
		if old.SHA256 != r.SHA256 {
			if err := tx.Bucket(bTokenHashes).Delete([]byte(old.SHA256)); err != nil {
				return auth.TokenRecord{}, err
			}
		}
	}
	r.Revision = rev
	b, err := encode(r)
	if err != nil {
		return auth.TokenRecord{}, err
	}
	if err := tx.Bucket(bTokens).Put([]byte(r.Holder), b); err != nil {
		return auth.TokenRecord{}, err
	}
	if err := tx.Bucket(bTokenHashes).Put([]byte(r.SHA256), []byte(r.Holder)); err != nil {
		return auth.TokenRecord{}, err
	}
	return r.record(), tx.Bucket(bTokenRevs).Put(u64(rev), []byte(r.Holder))
}

func checkTokenRecord(r auth.TokenRecord) error {
	if err := checkPart("holder", r.Holder); err != nil {
		return err
	}
	return checkPart("sha256", r.SHA256)
}

// createToken is CreateToken inside tx.
func createToken(tx *bolt.Tx, rec auth.TokenRecord, reuse bool) (auth.TokenRecord, error) {
	old, err := getToken(tx, rec.Holder)
	if err != nil {
		return auth.TokenRecord{}, err
	}
	if old != nil && (old.RevokedAt == 0 || !reuse) {
		return auth.TokenRecord{}, fault.Errorf(fault.CodeConflict, "holder %q has a token already", rec.Holder)
	}
	if h := tx.Bucket(bTokenHashes).Get([]byte(rec.SHA256)); h != nil && (old == nil || old.SHA256 != rec.SHA256) {
		return auth.TokenRecord{}, fault.Errorf(fault.CodeConflict, "another holder has this token")
	}
	r := storedToken(rec)
	r.RevokedAt, r.LastUsed = 0, 0
	return putToken(tx, old, r)
}

// CreateToken stores rec and appends d, in one transaction (see
// tokens.Store).
func (s *Store) CreateToken(ctx context.Context, rec auth.TokenRecord, reuse bool, d audit.Decision) (auth.TokenRecord, error) {
	if err := errorsOf(checkTokenRecord(rec), validateDecision(&d)); err != nil {
		return auth.TokenRecord{}, err
	}
	var out auth.TokenRecord
	err := s.update(ctx, func(tx *bolt.Tx) (err error) {
		if out, err = createToken(tx, rec, reuse); err != nil {
			return err
		}
		return appendDecision(tx, d)
	})
	return out, err
}

// RotateToken replaces the holder's live record whose hash is oldHash by
// rec, and appends d, in one transaction (see tokens.Store).
func (s *Store) RotateToken(ctx context.Context, oldHash string, rec auth.TokenRecord, d audit.Decision) (auth.TokenRecord, error) {
	if err := errorsOf(checkTokenRecord(rec), validateDecision(&d)); err != nil {
		return auth.TokenRecord{}, err
	}
	var out auth.TokenRecord
	err := s.update(ctx, func(tx *bolt.Tx) error {
		old, err := getToken(tx, rec.Holder)
		if err != nil {
			return err
		}
		if old == nil || old.RevokedAt != 0 {
			return fault.Errorf(fault.CodeNotFound, "no live token of holder %q", rec.Holder)
		}
		if old.SHA256 != oldHash {
			return fault.Errorf(fault.CodeConflict, "the token of holder %q changed meanwhile", rec.Holder)
		}
		if tx.Bucket(bTokenHashes).Get([]byte(rec.SHA256)) != nil {
			return fault.Errorf(fault.CodeConflict, "another holder has this token")
		}
		r := storedToken(rec)
		r.RevokedAt, r.LastUsed = 0, 0
		if out, err = putToken(tx, old, r); err != nil {
			return err
		}
		return appendDecision(tx, d)
	})
	return out, err
}

// RevokeToken marks the holder's live record revoked and appends d, in one
// transaction (see tokens.Store).
func (s *Store) RevokeToken(ctx context.Context, holder string, at time.Time, d audit.Decision) (auth.TokenRecord, error) {
	if err := errorsOf(checkPart("holder", holder), validateDecision(&d)); err != nil {
		return auth.TokenRecord{}, err
	}
	var out auth.TokenRecord
	err := s.update(ctx, func(tx *bolt.Tx) error {
		old, err := getToken(tx, holder)
		if err != nil {
			return err
		}
		if old == nil || old.RevokedAt != 0 {
			return fault.Errorf(fault.CodeNotFound, "no live token of holder %q", holder)
		}
		r := *old
		r.RevokedAt = ms(at)
		if out, err = putToken(tx, old, r); err != nil {
			return err
		}
		return appendDecision(tx, d)
	})
	return out, err
}

// CreateFirstTokens stores recs and appends ds when the store has never
// held a token (see tokens.Store).
func (s *Store) CreateFirstTokens(ctx context.Context, recs []auth.TokenRecord, ds []audit.Decision) (bool, error) {
	for i := range recs {
		if err := checkTokenRecord(recs[i]); err != nil {
			return false, err
		}
	}
	for i := range ds {
		if err := validateDecision(&ds[i]); err != nil {
			return false, err
		}
	}
	created := false
	err := s.update(ctx, func(tx *bolt.Tx) error {
		created = false
		if getU64(tx.Bucket(bMeta).Get(metaTokenRevision)) != 0 {
			return nil
		}
		for _, r := range recs {
			if _, err := createToken(tx, r, false); err != nil {
				return err
			}
		}
		for _, d := range ds {
			if err := appendDecision(tx, d); err != nil {
				return err
			}
		}
		created = true
		return nil
	})
	return created, err
}

// Token returns holder's record, nil when there is none (see
// tokens.Store).
func (s *Store) Token(ctx context.Context, holder string) (*auth.TokenRecord, error) {
	var out *auth.TokenRecord
	err := s.view(ctx, func(tx *bolt.Tx) error {
		out = nil
		r, err := getToken(tx, holder)
		if r != nil {
			rec := r.record()
			out = &rec
		}
		return err
	})
	return out, err
}

// TokensSince returns the token records changed after revision rev (all
// for 0) and the current token revision (see auth.TokenSource).
func (s *Store) TokensSince(ctx context.Context, rev int64) ([]auth.TokenRecord, int64, error) {
	var out []auth.TokenRecord
	var cur int64
	err := s.view(ctx, func(tx *bolt.Tx) error {
		out = nil
		cur = int64(getU64(tx.Bucket(bMeta).Get(metaTokenRevision)))
		if rev >= cur {
			return nil
		}
		c := tx.Bucket(bTokenRevs).Cursor()
		for k, v := c.Seek(u64(uint64(max(rev, 0)) + 1)); k != nil; k, v = c.Next() {
			r, err := getToken(tx, string(v))
			if err != nil {
				return err
			}
			if r != nil {
				out = append(out, r.record())
			}
		}
		return nil
	})
	return out, cur, err
}

// TouchTokens sets the last use of the tokens of the given hashes (never
// back), changing no revision (see auth.TokenSource).
func (s *Store) TouchTokens(ctx context.Context, used map[string]time.Time) error {
	return s.write(ctx, func(tx *bolt.Tx) error {
		for hash, at := range used {
			holder := tx.Bucket(bTokenHashes).Get([]byte(hash))
			if holder == nil {
				continue
			}
			r, err := getToken(tx, string(holder))
			if err != nil || r == nil || r.SHA256 != hash || ms(at) <= r.LastUsed {
				if err != nil {
					return err
				}
				continue
			}
			r.LastUsed = ms(at)
			b, err := encode(r)
			if err != nil {
				return err
			}
			if err := tx.Bucket(bTokens).Put(holder, b); err != nil {
				return err
			}
		}
		return nil
	})
}

// errorsOf is the first error of errs that is not nil.
func errorsOf(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
