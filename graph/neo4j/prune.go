package neo4jstore

import (
	"context"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/procedures"
)

var _ procedures.AuditPruner = (*Store)(nil)

// pruneBatch is the audit records PruneDecisions deletes per transaction.
const pruneBatch = 10_000

// PruneDecisions deletes audit records older than before, pruneBatch per
// transaction (see procedures.AuditPruner).
func (s *Store) PruneDecisions(ctx context.Context, before time.Time) (int64, error) {
	if before.IsZero() {
		return 0, invalid("before", "prune needs a time")
	}
	var total int64
	for {
		n, err := writeTx(ctx, s, "prune decisions", func(ctx context.Context, tx neo4j.ManagedTransaction) (int64, error) {
			recs, err := collect(ctx, tx, "decisions_prune", map[string]any{"before": dbTime(before), "batch": pruneBatch})
			if err != nil || len(recs) != 1 {
				return 0, err
			}
			n, _ := field(recs[0], "deleted").(int64)
			return n, nil
		})
		total += n
		if err != nil || n < pruneBatch {
			return total, err
		}
	}
}
