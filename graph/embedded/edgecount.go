package embedded

import (
	"context"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/graphview"
)

var _ graphview.EdgeCounter = (*Store)(nil)

// CountEdges returns the graph's CALLS edges (tool_procedures: one key a
// signature entry of a procedure) and INVESTIGATED_BY edges
// (edges_by_procedure: one key a procedure's cause), see
// graphview.EdgeCounter.
func (s *Store) CountEdges(ctx context.Context) (calls, investigatedBy int, err error) {
	err = s.view(ctx, func(tx *bolt.Tx) error {
		calls = tx.Bucket(bToolProcs).Stats().KeyN
		investigatedBy = tx.Bucket(bEdgesPC).Stats().KeyN
		return nil
	})
	return calls, investigatedBy, err
}
