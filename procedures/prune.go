package procedures

import (
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
