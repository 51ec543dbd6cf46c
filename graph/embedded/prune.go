package embedded

import (
	"context"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/procedures"
)

var _ procedures.AuditPruner = (*Store)(nil)

// PruneDecisions deletes audit records older than before,
// procedures.AuditPruneBatch per transaction (see procedures.AuditPruner).
func (s *Store) PruneDecisions(ctx context.Context, before time.Time) (int64, error) {
	limit := decisionKey(before, "")
	return procedures.PruneInBatches(before, procedures.AuditPruneBatch, func(batch int) (int64, error) {
		n := 0
		err := s.update(ctx, func(tx *bolt.Tx) error {
			n = 0
			c := tx.Bucket(bDecisions).Cursor()
			for k, v := c.First(); k != nil && string(k) < string(limit) && n < batch; k, v = c.First() {
				var d audit.Decision
				if err := decode(v, &d, "decision"); err != nil {
					return err
				}
				if err := c.Delete(); err != nil {
					return err
				}
				if err := tx.Bucket(bDecisionIDs).Delete([]byte(d.ID)); err != nil {
					return err
				}
				if err := tx.Bucket(bUnindexed).Delete(k); err != nil {
					return err
				}
				if d.Procedure != "" {
					if err := tx.Bucket(bDecByProc).Delete(append(prefix(d.Procedure), k...)); err != nil {
						return err
					}
				}
				for _, p := range decisionIndexes(d) {
					if err := tx.Bucket(bDecByField).Delete(append(p, k...)); err != nil {
						return err
					}
				}
				n++
			}
			return nil
		})
		return int64(n), err
	})
}
