package procedures

import (
	"context"
	"io"
	"time"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/buildinfo"
)

// BackupStore is a store that can write a consistent copy of its file
// while serving (the embedded store).
type BackupStore interface {
	// Backup writes a consistent snapshot of the store's file to w and
	// returns its size. Returns the writer's error as fault.CodeUnavailable.
	Backup(ctx context.Context, w io.Writer) (int64, error)
}

// Export writes a dump of the service's store to w (GET /v1/export).
// Returns fault.CodeInvalid when the store cannot be exported.
func (s *Service) Export(ctx context.Context, w io.Writer) error {
	ds, ok := s.store.(DumpStore)
	if !ok {
		return fault.Errorf(fault.CodeInvalid, "this store cannot be exported")
	}
	return WriteDump(ctx, ds, w)
}

// WriteDump writes a whole dump of st to w: header, records, trailer.
// Returns Dump's and the writer's errors.
func WriteDump(ctx context.Context, st DumpStore, w io.Writer) error {
	dw := NewDumpWriter(w, st.DumpSource(), buildinfo.Version())
	if err := st.Dump(ctx, dw); err != nil {
		return err
	}
	return dw.Close()
}

// Backup writes a consistent copy of the store's file to w (GET
// /v1/backup). Returns fault.CodeInvalid for a store without one (Neo4j: use its
// own backup, or export).
func (s *Service) Backup(ctx context.Context, w io.Writer) (int64, error) {
	bs, ok := s.store.(BackupStore)
	if !ok {
		return 0, fault.Errorf(fault.CodeInvalid, "this store has no file to back up: export it, or use the database's own backup")
	}
	return bs.Backup(ctx, w)
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
