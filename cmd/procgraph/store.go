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
// rank entries, so serve names the command that resumes it instead of
// serving it.
func refuseUnfinishedImport(ctx context.Context, s procedures.Store, cfg *serveConfig) error {
	ds, ok := s.(dump.Store)
	if !ok {
		return nil
	}
	m, err := ds.LoadState(ctx)
	if err != nil {
		return fmt.Errorf("reading the store's import marker: %s", fault.ErrorMessage(err))
	}
	if m == nil {
		return nil
	}
	what, flag := "import", ""
	if m.Merge {
		what, flag = "merge", " --merge"
	}
	where := "--store neo4j"
	if cfg.Store == "embedded" {
		where = "--store embedded --data " + cfg.Data
	}
	return fmt.Errorf("the store holds an unfinished %s (dump sha256 %s, applied up to line %d): it is not served until that completes; run `procgraph import DUMP%s %s` with that same dump to resume it",
		what, m.DumpID, m.Line, flag, where)
}
