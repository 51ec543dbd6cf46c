package neo4j

import (
	"context"
	"testing"

	"github.com/procgraph/procgraph/replay/replaytest"
)

// BenchmarkPolicyRead measures the reads of a session's policies a turn
// in the interactive phase made on Neo4j before the gate's policy index
// (policy_get, the exact text's; policies, the list of the session's),
// each one round trip: what a turn a policy or grant decides no longer
// makes while the index's entry is fresh (ADR 0050).
func BenchmarkPolicyRead(b *testing.B) {
	s := freshStore(b)
	replaytest.BindCost(b, s, s) // a session "s" with one policy
	ctx := context.Background()
	ps, err := s.Policies(ctx, "s")
	if err != nil || len(ps) != 1 {
		b.Fatalf("policies: %+v, %v", ps, err)
	}
	b.Run("policy_get", func(b *testing.B) {
		for b.Loop() {
			if _, ok, err := s.Policy(ctx, "s", ps[0].CodeHash); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("policies", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Policies(ctx, "s"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
