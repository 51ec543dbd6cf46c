package procedures

import (
	"context"
	"time"

	"github.com/procgraph/procgraph/fault"
)

// AuditPruneBatch is the audit records a store's PruneDecisions deletes per
// transaction.
const AuditPruneBatch = 10_000

// PruneInBatches is the one loop behind every AuditPruner.PruneDecisions. A
// zero before is fault.CodeInvalid (and nothing is deleted). Otherwise it calls
// deleteBatch — one transaction that deletes at most batch audit records
// older than before and answers how many it deleted — until a call deletes
// fewer than batch or fails, and answers the total deleted, on error too
// (the batches committed before the failure stay deleted).
func PruneInBatches(before time.Time, batch int, deleteBatch func(batch int) (int64, error)) (int64, error) {
	if before.IsZero() {
		return 0, fault.Errorf(fault.CodeInvalid, "prune needs a time").WithDetails("field", "before")
	}
	var total int64
	for {
		n, err := deleteBatch(batch)
		total += n
		if err != nil || n < int64(batch) {
			return total, err
		}
	}
}

// AuditPruner is a store whose audit log can be pruned (procgraph audit
// prune, which exports first). Both stores implement it.
type AuditPruner interface {
	// PruneDecisions deletes the audit records older than before (At
	// strictly before it) and returns how many it deleted. It works in
	// batches: interrupted, it has deleted some of them and may be run
	// again. Returns fault.CodeInvalid for a zero before.
	PruneDecisions(ctx context.Context, before time.Time) (int64, error)
}
