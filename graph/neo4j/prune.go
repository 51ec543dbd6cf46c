package neo4j

import (
	"context"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/procedures"
)

var _ procedures.AuditPruner = (*Store)(nil)

// PruneDecisions deletes audit records older than before,
// procedures.AuditPruneBatch per transaction (see procedures.AuditPruner).
func (s *Store) PruneDecisions(ctx context.Context, before time.Time) (int64, error) {
	return procedures.PruneInBatches(before, procedures.AuditPruneBatch, func(batch int) (int64, error) {
		return writeTx(ctx, s, "prune decisions", func(ctx context.Context, tx neo4j.ManagedTransaction) (int64, error) {
			recs, err := collect(ctx, tx, "decisions_prune", map[string]any{"before": dbTime(before), "batch": batch})
			if err != nil {
				return 0, err
			}
			if len(recs) != 1 {
				return 0, errRows("decisions_prune", len(recs))
			}
			n, _ := field(recs[0], "deleted").(int64)
			return n, nil
		})
	})
}
