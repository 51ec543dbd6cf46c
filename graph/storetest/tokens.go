package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/tokens"
)

// tokenStoreOf is both stores' interfaces.
type tokenStoreOf interface {
	procedures.Store
	tokens.Store
}

// tokenStore is s as a tokens.Store, failing the test when it is not one.
func tokenStore(t *testing.T, s procedures.Store) tokenStoreOf {
	t.Helper()
	ts, ok := s.(tokenStoreOf)
	if !ok {
		t.Fatalf("%T keeps no tokens (tokens.Store)", s)
	}
	return ts
}

// tokenDecision is a token record's audit record, as the Manager builds
// it, with a fresh id at at.
func tokenDecision(reason string, r auth.TokenRecord, at time.Time) audit.Decision {
	d := tokens.Decision(reason, "alice", r)
	d.ID, d.At, d.AllowedTools = audit.NewDecisionID(at), Ms(at), []string{}
	return d
}

// tokenRec is a live record of holder whose token is token.
func tokenRec(holder, token string, scopes ...string) auth.TokenRecord {
	return auth.TokenRecord{Holder: holder, SHA256: auth.HashToken(token), Scopes: scopes, CreatedAt: Ms(At(0)), CreatedBy: "alice"}
}

func mustTokensSince(t *testing.T, s tokenStoreOf, rev int64) ([]auth.TokenRecord, int64) {
	t.Helper()
	recs, cur, err := s.TokensSince(ctx, rev)
	if err != nil {
		t.Fatalf("TokensSince(%d): %v", rev, err)
	}
	slices.SortFunc(recs, func(a, b auth.TokenRecord) int { return int(a.Revision - b.Revision) })
	return recs, cur
}

func requireCode(t *testing.T, what string, err error, code fault.Code) {
	t.Helper()
	if fault.ErrorCode(err) != code {
		t.Fatalf("%s: %v, want %s", what, err, code)
	}
}

// testTokens: a store keeps token records (docs/design.md "Tokens in the
// store"): hashes, never tokens; every change bumps the token revision,
// commits its audit record with it, and is read back by TokensSince; a
// holder has one live token; rotate is a compare-and-set on the old hash;
// a revoked record stays (revoked) until its holder is given a new one;
// last uses change no revision; the first tokens are created once; tokens
// do not make a store non-empty for an import.
func testTokens(t *testing.T, newStore NewStore) {
	t.Run("create, read back, conflicts", func(t *testing.T) {
		s := tokenStore(t, newStore(t))
		if recs, rev := mustTokensSince(t, s, 0); len(recs) != 0 || rev != 0 {
			t.Fatalf("a new store: %v at revision %d, want none at 0", recs, rev)
		}
		r := tokenRec("bob", "tok-bob", "read", "grant")
		r.ExpiresAt = Ms(At(3600))
		got, err := s.CreateToken(ctx, r, false, tokenDecision(audit.ReasonTokenCreated, r, At(1)))
		if err != nil {
			t.Fatal(err)
		}
		if got.Holder != "bob" || got.SHA256 != r.SHA256 || !slices.Equal(got.Scopes, r.Scopes) || got.Revision != 1 || got.CreatedBy != "alice" {
			t.Fatalf("created %+v", got)
		}
		RequireTime(t, "expires_at", got.ExpiresAt, At(3600))
		RequireTime(t, "created_at", got.CreatedAt, At(0))
		recs, rev := mustTokensSince(t, s, 0)
		if len(recs) != 1 || rev != 1 || recs[0].SHA256 != r.SHA256 || !recs[0].RevokedAt.IsZero() || !recs[0].LastUsedAt.IsZero() {
			t.Fatalf("TokensSince(0) = %+v at %d", recs, rev)
		}
		ds := MustDecisions(t, s, audit.DecisionFilter{Kind: audit.KindToken})
		if len(ds) != 1 || ds[0].Reason != audit.ReasonTokenCreated || ds[0].Note == "" {
			t.Fatalf("the audit records: %+v", ds)
		}
		again := tokenRec("bob", "tok-bob-2", "read")
		_, err = s.CreateToken(ctx, again, true, tokenDecision(audit.ReasonTokenCreated, again, At(2)))
		requireCode(t, "a second live token for bob", err, fault.CodeConflict)
		sameHash := tokenRec("carol", "tok-bob", "read")
		_, err = s.CreateToken(ctx, sameHash, true, tokenDecision(audit.ReasonTokenCreated, sameHash, At(2)))
		requireCode(t, "carol with bob's token", err, fault.CodeConflict)
		if _, rev := mustTokensSince(t, s, 0); rev != 1 {
			t.Fatalf("a refused change moved the revision to %d", rev)
		}
		if ds := MustDecisions(t, s, audit.DecisionFilter{Kind: audit.KindToken}); len(ds) != 1 {
			t.Fatalf("a refused change left an audit record: %+v", ds)
		}
		if recs, rev := mustTokensSince(t, s, 1); len(recs) != 0 || rev != 1 {
			t.Fatalf("TokensSince(1) = %+v at %d, want none", recs, rev)
		}
		if r, err := s.Token(ctx, "bob"); err != nil || r == nil || r.SHA256 != got.SHA256 || r.Revision != 1 {
			t.Fatalf("Token(bob) = %+v, %v", r, err)
		}
		if r, err := s.Token(ctx, "nobody"); err != nil || r != nil {
			t.Fatalf("Token(nobody) = %+v, %v; want none", r, err)
		}
	})

	t.Run("rotate, revoke, reuse", func(t *testing.T) {
		s := tokenStore(t, newStore(t))
		bob := tokenRec("bob", "tok-bob", "read")
		carol := tokenRec("carol", "tok-carol", "admin")
		for _, r := range []auth.TokenRecord{bob, carol} {
			if _, err := s.CreateToken(ctx, r, false, tokenDecision(audit.ReasonTokenCreated, r, At(1))); err != nil {
				t.Fatal(err)
			}
		}
		rotated := tokenRec("bob", "tok-bob-2", "read")
		_, err := s.RotateToken(ctx, auth.HashToken("not-bob"), rotated, tokenDecision(audit.ReasonTokenRotated, rotated, At(2)))
		requireCode(t, "rotate with a stale hash", err, fault.CodeConflict)
		got, err := s.RotateToken(ctx, bob.SHA256, rotated, tokenDecision(audit.ReasonTokenRotated, rotated, At(2)))
		if err != nil || got.SHA256 != rotated.SHA256 || got.Revision != 3 {
			t.Fatalf("rotate: %+v, %v", got, err)
		}
		recs, rev := mustTokensSince(t, s, 2)
		if rev != 3 || len(recs) != 1 || recs[0].Holder != "bob" || recs[0].SHA256 != rotated.SHA256 {
			t.Fatalf("TokensSince(2) after the rotate: %+v at %d", recs, rev)
		}
		// bob's old hash is free again, carol's is not.
		_, err = s.RotateToken(ctx, rotated.SHA256, tokenRec("bob", "tok-carol", "read"), tokenDecision(audit.ReasonTokenRotated, rotated, At(3)))
		requireCode(t, "rotate onto carol's token", err, fault.CodeConflict)

		if _, err := s.RevokeToken(ctx, "bob", At(4), tokenDecision(audit.ReasonTokenRevoked, rotated, At(4))); err != nil {
			t.Fatal(err)
		}
		recs, rev = mustTokensSince(t, s, 3)
		if rev != 4 || len(recs) != 1 || recs[0].Holder != "bob" || !recs[0].RevokedAt.Equal(Ms(At(4))) {
			t.Fatalf("TokensSince(3) after the revoke: %+v at %d", recs, rev)
		}
		_, err = s.RevokeToken(ctx, "bob", At(5), tokenDecision(audit.ReasonTokenRevoked, rotated, At(5)))
		requireCode(t, "revoke a revoked token", err, fault.CodeNotFound)
		_, err = s.RotateToken(ctx, rotated.SHA256, tokenRec("bob", "tok-bob-3", "read"), tokenDecision(audit.ReasonTokenRotated, rotated, At(5)))
		requireCode(t, "rotate a revoked token", err, fault.CodeNotFound)
		_, err = s.RevokeToken(ctx, "dave", At(5), tokenDecision(audit.ReasonTokenRevoked, rotated, At(5)))
		requireCode(t, "revoke an unknown holder", err, fault.CodeNotFound)
		fresh := tokenRec("bob", "tok-bob-4", "read")
		_, err = s.CreateToken(ctx, fresh, false, tokenDecision(audit.ReasonTokenImported, fresh, At(6)))
		requireCode(t, "an import over a revoked holder", err, fault.CodeConflict)
		if _, err := s.CreateToken(ctx, fresh, true, tokenDecision(audit.ReasonTokenCreated, fresh, At(6))); err != nil {
			t.Fatalf("a new token for a revoked holder: %v", err)
		}
		recs, _ = mustTokensSince(t, s, 0)
		if len(recs) != 2 || recs[1].Holder != "bob" || recs[1].SHA256 != fresh.SHA256 || !recs[1].RevokedAt.IsZero() {
			t.Fatalf("every record: %+v", recs)
		}
		if ds := MustDecisions(t, s, audit.DecisionFilter{Kind: audit.KindToken}); len(ds) != 5 {
			t.Fatalf("%d audit records, want 5 (2 created, rotated, revoked, created)", len(ds))
		}
	})

	t.Run("last use", func(t *testing.T) {
		s := tokenStore(t, newStore(t))
		bob := tokenRec("bob", "tok-bob", "read")
		if _, err := s.CreateToken(ctx, bob, false, tokenDecision(audit.ReasonTokenCreated, bob, At(1))); err != nil {
			t.Fatal(err)
		}
		if err := s.TouchTokens(ctx, map[string]time.Time{bob.SHA256: At(10), auth.HashToken("unknown"): At(10)}); err != nil {
			t.Fatal(err)
		}
		if err := s.TouchTokens(ctx, map[string]time.Time{bob.SHA256: At(5)}); err != nil {
			t.Fatal(err)
		}
		recs, rev := mustTokensSince(t, s, 0)
		if rev != 1 || len(recs) != 1 {
			t.Fatalf("after last uses: %+v at %d, want the revision unchanged", recs, rev)
		}
		RequireTime(t, "last_used_at (never back)", recs[0].LastUsedAt, At(10))
	})

	t.Run("first tokens once", func(t *testing.T) {
		s := tokenStore(t, newStore(t))
		op, agent := tokenRec("operator", "tok-op", "read", "admin"), tokenRec("agent", "tok-agent", "read")
		ds := []audit.Decision{tokenDecision(audit.ReasonTokenCreated, op, At(1)), tokenDecision(audit.ReasonTokenCreated, agent, At(1))}
		if ok, err := s.CreateFirstTokens(ctx, []auth.TokenRecord{op, agent}, ds); err != nil || !ok {
			t.Fatalf("the first tokens of a new store: %v, %v", ok, err)
		}
		recs, _ := mustTokensSince(t, s, 0)
		if len(recs) != 2 {
			t.Fatalf("first tokens: %+v", recs)
		}
		again := []audit.Decision{tokenDecision(audit.ReasonTokenCreated, op, At(2))}
		if ok, err := s.CreateFirstTokens(ctx, []auth.TokenRecord{tokenRec("other", "tok-other", "read")}, again); err != nil || ok {
			t.Fatalf("first tokens again: %v, %v; want not created", ok, err)
		}
		if recs, _ := mustTokensSince(t, s, 0); len(recs) != 2 {
			t.Fatalf("a second first start added tokens: %+v", recs)
		}
		if ds := MustDecisions(t, s, audit.DecisionFilter{Kind: audit.KindToken}); len(ds) != 2 {
			t.Fatalf("%d audit records, want the first two", len(ds))
		}
		if d, ok := s.(dump.Store); ok {
			if empty, err := d.Empty(ctx); err != nil || !empty {
				t.Fatalf("a store holding only tokens: Empty = %v, %v; want empty (tokens are not data)", empty, err)
			}
		}
	})
}
