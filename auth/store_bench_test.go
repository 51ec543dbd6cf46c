package auth

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// memSource is a TokenSource in memory: n live tokens "tok-0"…, read
// whole once and then answered "nothing changed" (as a store is, between
// changes); reads counts its reads.
type memSource struct {
	mu    sync.Mutex
	recs  []TokenRecord
	reads int
}

func newMemSource(n int) *memSource {
	s := &memSource{}
	for i := range n {
		s.recs = append(s.recs, TokenRecord{Holder: fmt.Sprintf("h%d", i), SHA256: HashToken(fmt.Sprintf("tok-%d", i)),
			Scopes: []string{"read", "invoke"}, Revision: int64(i + 1)})
	}
	return s
}

func (s *memSource) TokensSince(_ context.Context, rev int64) ([]TokenRecord, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	cur := int64(len(s.recs))
	if rev >= cur {
		return nil, cur, nil
	}
	return append([]TokenRecord(nil), s.recs[rev:]...), cur, nil
}

func (s *memSource) TouchTokens(context.Context, map[string]time.Time) error { return nil }

// BenchmarkStoreCheck is the authenticated request's token check against
// a store's tokens, at 1,000 and 100,000 stored tokens: a hash, a map
// lookup, a constant-time comparison, and a read of what changed at most
// once a second (docs/benchmarks.md "Tokens"). The tokens file's check,
// which compares against every entry, is beside it for scale.
func BenchmarkStoreCheck(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1000, 100000} {
		src := newMemSource(n)
		a, err := NewStoreAuthenticator(ctx, src, StoreOptions{})
		if err != nil {
			b.Fatal(err)
		}
		tok := fmt.Sprintf("tok-%d", n/2)
		b.Run(fmt.Sprintf("store/tokens=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if p, err := a.Check(ctx, tok); err != nil || p.Name == "" {
					b.Fatal(p, err)
				}
			}
		})
		f := &TokensFile{}
		for _, r := range src.recs {
			f.Tokens = append(f.Tokens, TokenEntry{Name: r.Holder, SHA256: r.SHA256, Scopes: r.Scopes})
		}
		file := NewAuthenticator(f)
		b.Run(fmt.Sprintf("file/tokens=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := file.Check(ctx, tok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
