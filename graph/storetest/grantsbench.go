package storetest

import (
	"context"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/procedures"
)

// benchGrants is how many procedures BenchGrantsList grants.
const benchGrants = 10

// BenchGrantsList fills s to n procedures (see Fill), grants auto-run on
// benchGrants of the first thousand and measures the
// service's GrantsList, as GET /v1/sessions/{id}/policies runs it.
func BenchGrantsList(b *testing.B, s procedures.Store, n int) {
	Fill(b, s, n)
	ctx := context.Background()
	for i := range benchGrants {
		p := MustGet(b, s, fillInput(i*97, 0).Name)
		if p.Grant != nil {
			continue
		}
		g := &procedures.Grant{Enabled: true, GrantedBy: "bench", GrantedAt: At(i)}
		if _, err := s.SetGrant(ctx, p.Name, g, p.CodeHash, nil, Decision(audit.KindGrant, p.Name, p.CodeHash, At(i))); err != nil {
			b.Fatalf("SetGrant: %v", err)
		}
	}
	svc := procedures.NewService(s, procedures.Options{})
	b.ReportAllocs()
	for b.Loop() {
		granted, err := svc.GrantsList(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if len(granted) != benchGrants {
			b.Fatalf("GrantsList: %d procedures, want %d", len(granted), benchGrants)
		}
	}
}
