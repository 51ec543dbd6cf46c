package embedded

import (
	"context"
	"time"

	bolt "go.etcd.io/bbolt"

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
	limit := decisionKey(before, "")
	var total int64
	for {
		n := 0
		err := s.update(ctx, func(tx *bolt.Tx) error {
			n = 0
			c := tx.Bucket(bDecisions).Cursor()
			for k, v := c.First(); k != nil && string(k) < string(limit) && n < pruneBatch; k, v = c.First() {
				var d procedures.Decision
				if err := decode(v, &d, "decision"); err != nil {
					return err
				}
				if err := c.Delete(); err != nil {
					return err
				}
				if err := tx.Bucket(bDecisionIDs).Delete([]byte(d.ID)); err != nil {
					return err
				}
				if d.Procedure != "" {
					if err := tx.Bucket(bDecByProc).Delete(append(prefix(d.Procedure), k...)); err != nil {
						return err
					}
				}
				n++
			}
			return nil
		})
		total += int64(n)
		if err != nil || n < pruneBatch {
			return total, err
		}
	}
}
