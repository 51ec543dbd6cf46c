package main

import (
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/graph/embedded"
	neo4jstore "github.com/procgraph/procgraph/graph/neo4j"
	"github.com/procgraph/procgraph/procedures"
)

// openStore opens the configured backend.
func openStore(ctx context.Context, cfg *serveConfig, log zerolog.Logger) (procedures.Store, error) {
	switch cfg.Store {
	case "embedded":
		s, err := embedded.Open(cfg.Data, embedded.Options{Logger: log, LockTimeout: cfg.lockTimeout})
		if err != nil {
			if _, _, locked := lockHolder(cfg.Data); locked {
				return nil, &storeLockedError{path: cfg.Data, holder: lockHolderText(cfg.Data)}
			}
			return nil, fmt.Errorf("opening the embedded store %s: %s", cfg.Data, fault.ErrorMessage(err))
		}
		return s, nil
	case "neo4j":
		octx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		s, err := neo4jstore.Open(octx, neo4jstore.Config{URI: cfg.Neo4jURI, Username: cfg.Neo4jUsername,
			Password: cfg.Neo4jPassword, Database: cfg.Neo4jDatabase, Logger: log})
		if err != nil {
			return nil, fmt.Errorf("opening Neo4j at %s: %s", cfg.Neo4jURI, fault.ErrorMessage(err))
		}
		return s, nil
	}
	return nil, fmt.Errorf("unknown store %q", cfg.Store)
}

// storeLockedError is an embedded store file another process holds (a
// serve, for as long as it runs).
type storeLockedError struct {
	path, holder string
}

func (e *storeLockedError) Error() string {
	return fmt.Sprintf("the embedded store %s is in use by %s: one process at a time opens it", e.path, e.holder)
}

// refuseUnfinishedImport refuses a store holding an import's marker
// (docs/design.md "A dump is data, not authority"): an import or merge that did
// not complete left records without their recomputed classifications and
// rank entries, so serve and every offline command that reads a store
// (export, audit prune, compact, restore) name the command that resumes it
// instead of using it; refused says what is not done ("it is not served").
// procgraph import, which resumes it, is the one command that takes it.
func refuseUnfinishedImport(ctx context.Context, s procedures.Store, cfg *serveConfig, refused string) error {
	ds, ok := s.(dump.Store)
	if !ok {
		return nil
	}
	m, err := ds.LoadState(ctx)
	if err != nil {
		return fmt.Errorf("reading the store's import marker: %s", fault.ErrorMessage(err))
	}
	return unfinishedImport(m, cfg, refused)
}

// unfinishedImport is the refusal of a store holding marker m (nil when
// it holds none): what the import was, how to finish it (the same dump,
// imported again, resumes it) and how to discard it.
func unfinishedImport(m *dump.LoadMarker, cfg *serveConfig, refused string) error {
	if m == nil {
		return nil
	}
	what, flag := "import", ""
	if m.Merge {
		what, flag = "merge", " --merge"
	}
	where := "--store neo4j"
	discard := "empty the database (it was empty when the import began)"
	if cfg.Store == "embedded" {
		where = "--store embedded --data " + cfg.Data
		discard = fmt.Sprintf("remove %s and %s (it was empty when the import began)", cfg.Data, embedded.SearchIndexPath(cfg.Data))
	}
	if m.Merge {
		discard = "restore the backup taken before the merge"
	}
	return fmt.Errorf("the store holds an unfinished %s (dump sha256 %s, applied up to line %d): %s until that completes; to finish it, run `procgraph import DUMP%s %s` with that same dump (it resumes); to discard it, %s",
		what, m.DumpID, m.Line, refused, flag, where, discard)
}
