package procedures

import (
	"context"
	"io"

	"github.com/procgraph/procgraph/fault"
)

// BackupStore is a store that can write a consistent copy of its file
// while serving (the embedded store).
type BackupStore interface {
	// Backup writes a consistent snapshot of the store's file to w and
	// returns its size. Returns the writer's error as fault.CodeUnavailable.
	Backup(ctx context.Context, w io.Writer) (int64, error)
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
