package embedded

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/tokens"
)

// BenchmarkTokenCheck is the authenticated request's token check over the
// embedded store's tokens at 1,000 and 100,000 stored tokens
// (docs/benchmarks.md "Tokens"): the authenticator's copy, and the store's
// read of what changed once its copy is a second old (here every second
// of the run, answering "nothing changed"). Start is the authenticator's
// first read of every token.
func BenchmarkTokenCheck(b *testing.B) {
	ctx := context.Background()
	rec := procedures.NewRecorder(nil, procedures.RecorderOptions{})
	for _, n := range benchTokenSizes {
		s := benchStore(b, Options{NoSync: true})
		for i := range n {
			r := auth.TokenRecord{Holder: fmt.Sprintf("h%d", i), SHA256: auth.HashToken(fmt.Sprintf("tok-%d", i)),
				Scopes: []string{"read", "invoke"}, CreatedAt: time.Now(), CreatedBy: "bench"}
			d, err := rec.Build(tokens.Decision(audit.ReasonTokenCreated, "bench", r))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.CreateToken(ctx, r, false, d); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("start/tokens=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := auth.NewStoreAuthenticator(ctx, s, auth.StoreOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		a, err := auth.NewStoreAuthenticator(ctx, s, auth.StoreOptions{})
		if err != nil {
			b.Fatal(err)
		}
		tok := fmt.Sprintf("tok-%d", n/2)
		b.Run(fmt.Sprintf("check/tokens=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if p, err := a.Check(ctx, tok); err != nil || p.Name == "" {
					b.Fatal(p, err)
				}
			}
		})
	}
}

// benchTokenSizes are BenchmarkTokenCheck's numbers of stored tokens.
var benchTokenSizes = []int{1000, 100000}
