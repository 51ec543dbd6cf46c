package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"

	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/procedures"
)

// exportThenPrune writes the whole store to archive (a normal dump), then
// deletes the audit records older than cut; when the export fails nothing
// is pruned. It returns how many records were deleted.
func exportThenPrune(ctx context.Context, st procedures.Store, archive string, cut time.Time) (int64, error) {
	ds, ok := st.(dump.Store)
	p, ok2 := st.(procedures.AuditPruner)
	if !ok || !ok2 {
		return 0, fmt.Errorf("this store cannot export and prune its audit log")
	}
	w, commit, err := outputFile(archive, nil)
	if err != nil {
		return 0, err
	}
	if err = commit(dump.Write(ctx, ds, w, dump.DumpOptions{})); err != nil {
		return 0, fmt.Errorf("the export failed, nothing was pruned: %v", err)
	}
	n, err := p.PruneDecisions(ctx, cut)
	if err != nil {
		return n, fmt.Errorf("exported to %s; pruning stopped after %d records: %v", archive, n, err)
	}
	return n, nil
}

// keepAudit is serve's --audit-retention: at start and then every
// min(retention, 1h) it archives the store into dir and prunes the audit
// records older than retention, until ctx ends. It returns when it has
// stopped (an archive being written is finished or abandoned first).
func keepAudit(ctx context.Context, st procedures.Store, dir string, retention time.Duration, log zerolog.Logger) {
	tick := time.NewTicker(min(retention, time.Hour))
	defer tick.Stop()
	for {
		now := time.Now().UTC()
		archive := filepath.Join(dir, "audit-"+now.Format("20060102T150405.000000000Z")+".pgdump")
		n, err := exportThenPrune(ctx, st, archive, now.Add(-retention))
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			log.Error().Err(err).Msg("audit retention: the audit log was not pruned")
		case n > 0:
			log.Info().Int64("pruned", n).Str("archive", archive).Msg("audit retention: archived the store and pruned the audit log")
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
