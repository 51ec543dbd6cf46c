package neo4j

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/procedures"
)

// canonicalBatch is the number of versions backfillCanonical gives a
// canonical hash per transaction (a variable for tests).
var canonicalBatch = 1_000

// backfillCanonical gives every version stored without a canonical hash
// the hash of its code under the stored catalogue
// (procedures.CanonicalHashOf; docs/design.md "The canonical program"), a
// batch per transaction, until none is left. Idempotent; on an up-to-date
// database it costs one scan of the versions.
func (s *Store) backfillCanonical(ctx context.Context) error {
	for {
		n, err := writeTx(ctx, s, "schema", func(ctx context.Context, tx neo4j.ManagedTransaction) (int, error) {
			cat, err := catalogueIn(ctx, tx)
			if err != nil {
				return 0, err
			}
			recs, err := collect(ctx, tx, "canonical_missing", map[string]any{"batch": canonicalBatch})
			if err != nil || len(recs) == 0 {
				return 0, err
			}
			rows := make([]map[string]any, 0, len(recs))
			for _, rec := range recs {
				id, _ := field(rec, "id").(string)
				code, _ := field(rec, "code").(string)
				dialect, _ := field(rec, "dialect").(string)
				var canonical any
				if c, err := procedures.CanonicalHashOf(code, dialect, cat); err == nil {
					canonical = c
				}
				rows = append(rows, map[string]any{"id": id, "canonical": canonical})
			}
			return len(recs), exec(ctx, tx, "canonical_set", map[string]any{"rows": rows})
		})
		if err != nil || n < canonicalBatch {
			return err
		}
	}
}
