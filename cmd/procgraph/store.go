package main

import (
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/procgraph/procgraph/graph/embedded"
	neo4jstore "github.com/procgraph/procgraph/graph/neo4j"
	"github.com/procgraph/procgraph/procedures"
)

// openStore opens the configured backend.
func openStore(ctx context.Context, cfg *serveConfig, log zerolog.Logger) (procedures.Store, error) {
	switch cfg.Store {
	case "embedded":
		s, err := embedded.Open(cfg.Data, embedded.Options{Logger: log})
		if err != nil {
			return nil, fmt.Errorf("opening the embedded store %s: %s", cfg.Data, procedures.ErrorMessage(err))
		}
		return s, nil
	case "neo4j":
		octx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		s, err := neo4jstore.Open(octx, neo4jstore.Config{URI: cfg.Neo4jURI, Username: cfg.Neo4jUsername,
			Password: cfg.Neo4jPassword, Database: cfg.Neo4jDatabase, Logger: log})
		if err != nil {
			return nil, fmt.Errorf("opening Neo4j at %s: %s", cfg.Neo4jURI, procedures.ErrorMessage(err))
		}
		return s, nil
	}
	return nil, fmt.Errorf("unknown store %q", cfg.Store)
}
