package auth

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/procgraph/procgraph/fault"
)

// fakeStore is a TokenSource whose records a test changes, as a store's
// writes do (each change a new revision).
type fakeStore struct {
	mu   sync.Mutex
	recs map[string]TokenRecord
	rev  int64
	err  error
}

func (s *fakeStore) put(r TokenRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.recs == nil {
		s.recs = map[string]TokenRecord{}
	}
	s.rev++
	r.Revision = s.rev
	s.recs[r.Holder] = r
}

func (s *fakeStore) TokensSince(_ context.Context, rev int64) ([]TokenRecord, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, 0, s.err
	}
	var out []TokenRecord
	for _, r := range s.recs {
		if r.Revision > rev {
			out = append(out, r)
		}
	}
	return out, s.rev, nil
}

func (s *fakeStore) TouchTokens(context.Context, map[string]time.Time) error { return nil }

// TestStoreAuthenticator: a store-backed authenticator accepts the live
// tokens, sees a change only once its copy is SyncEvery old (read then,
// never before), refuses a revoked, rotated-away or expired token, and
// refuses everything (unavailable) while the store cannot be read.
func TestStoreAuthenticator(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	s := &fakeStore{}
	s.put(TokenRecord{Holder: "alice", SHA256: HashToken("tok-a"), Scopes: []string{"read"}})
	a, err := NewStoreAuthenticator(ctx, s, StoreOptions{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Enabled() {
		t.Fatal("a store's authenticator with auth off")
	}
	check := func(tok string) (string, fault.Code) {
		p, err := a.Check(ctx, tok)
		return p.Name, fault.ErrorCode(err)
	}
	if name, code := check("tok-a"); name != "alice" || code != "" {
		t.Fatalf("alice: %q %q", name, code)
	}
	s.put(TokenRecord{Holder: "alice", SHA256: HashToken("tok-a"), Scopes: []string{"read"}, RevokedAt: now})
	if name, _ := check("tok-a"); name != "alice" {
		t.Fatal("the copy was read again before SyncEvery")
	}
	now = now.Add(SyncEvery)
	if _, code := check("tok-a"); code != fault.CodeUnauthorized {
		t.Fatalf("a revoked token: %q", code)
	}
	s.put(TokenRecord{Holder: "alice", SHA256: HashToken("tok-a2"), Scopes: []string{"read"}, ExpiresAt: now.Add(time.Hour)})
	now = now.Add(SyncEvery)
	if name, code := check("tok-a2"); name != "alice" || code != "" {
		t.Fatalf("a new token for a revoked holder: %q %q", name, code)
	}
	now = now.Add(time.Hour)
	if _, code := check("tok-a2"); code != fault.CodeUnauthorized {
		t.Fatalf("an expired token: %q", code)
	}
	s.mu.Lock()
	s.err = errors.New("down")
	s.mu.Unlock()
	now = now.Add(SyncEvery)
	if _, code := check("tok-a2"); code != fault.CodeUnavailable {
		t.Fatalf("with the store down: %q, want unavailable", code)
	}
}
