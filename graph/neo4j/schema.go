package neo4j

import (
	"context"
	"errors"
	"strings"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/cypher"
)

// applySchema creates the constraints and indexes of cypher.Schema that do
// not exist yet, each in its own transaction (schema and data changes do not
// mix), waits until the indexes are online, then backfills the rank of
// procedures that lack it (backfillRank), classifies those not yet
// classified (backfillClasses) and counts the tools of those whose tools
// are not counted in their class (backfillTools); first, an old search
// index is dropped to be created again (migrateSearchIndex). Several
// instances starting at once are fine: a rule another one just created is
// not an error, and the backfill is idempotent.
func (s *Store) applySchema(ctx context.Context) error {
	if err := s.migrateSearchIndex(ctx); err != nil {
		return err
	}
	for _, stmt := range cypher.Schema {
		_, err := writeTx(ctx, s, "schema", func(ctx context.Context, tx neo4j.ManagedTransaction) (struct{}, error) {
			res, err := tx.Run(ctx, stmt, nil)
			if err != nil {
				return struct{}{}, err
			}
			_, err = res.Consume(ctx)
			return struct{}{}, err
		})
		if err != nil && !alreadyExists(err) {
			return err
		}
	}
	_, err := writeTx(ctx, s, "schema", func(ctx context.Context, tx neo4j.ManagedTransaction) (struct{}, error) {
		return struct{}{}, exec(ctx, tx, "await_indexes", map[string]any{"seconds": 300})
	})
	if err != nil {
		return err
	}
	if err := s.backfillRank(ctx); err != nil {
		return err
	}
	if err := s.backfillClasses(ctx); err != nil {
		return err
	}
	if err := s.backfillTools(ctx); err != nil {
		return err
	}
	if err := s.backfillBaselines(ctx); err != nil {
		return err
	}
	return s.backfillCanonical(ctx)
}

// migrateSearchIndex drops the procedure_search index when it is strongly
// consistent (as created before it became eventually consistent:
// cypher/schema/03_search.cypher), so that the schema creates it again with
// its current options; the population that follows is awaited with the
// other indexes. Two instances migrating at once both end with the new
// index (the drop and the create are idempotent).
func (s *Store) migrateSearchIndex(ctx context.Context) error {
	recs, err := query(ctx, s, "schema", neo4j.AccessModeRead, "search_index_options", nil)
	if err != nil || len(recs) == 0 {
		return err
	}
	if ec, _ := field(recs[0], "eventuallyConsistent").(bool); ec {
		return nil
	}
	s.log.Info().Msg("neo4j store: rebuilding the search index procedure_search as eventually consistent")
	_, err = writeTx(ctx, s, "schema", func(ctx context.Context, tx neo4j.ManagedTransaction) (struct{}, error) {
		return struct{}{}, exec(ctx, tx, "search_index_drop", nil)
	})
	return err
}

// rankBatch is the number of procedures backfillRank updates per transaction.
const rankBatch = 10_000

// backfillRank sets the rank (the key find_all_page.cypher orders by) of
// every procedure that has none (a database written before rank existed),
// s.rankBatch procedures per transaction (rank_backfill.cypher), until a batch
// finds fewer: a database that is up to date costs one scan of the
// procedures.
func (s *Store) backfillRank(ctx context.Context) error {
	return s.backfillBatches(ctx, "rank_backfill", s.rankBatch)
}

// backfillBatches runs the stored backfill stmt (parameter $batch, one row
// with the number of procedures it updated) in one write transaction per
// batch, until a batch updates fewer than batch.
func (s *Store) backfillBatches(ctx context.Context, stmt string, batch int) error {
	for {
		n, err := writeTx(ctx, s, "schema", func(ctx context.Context, tx neo4j.ManagedTransaction) (int64, error) {
			recs, err := collect(ctx, tx, stmt, map[string]any{"batch": batch})
			if err != nil {
				return 0, err
			}
			if len(recs) != 1 {
				return 0, errRows(stmt, len(recs))
			}
			n, _ := field(recs[0], "updated").(int64)
			return n, nil
		})
		if err != nil || n < int64(batch) {
			return err
		}
	}
}

func alreadyExists(err error) bool {
	var ne *neo4j.Neo4jError
	return errors.As(err, &ne) && strings.HasPrefix(ne.Code, "Neo.ClientError.Schema.") && strings.HasSuffix(ne.Code, "AlreadyExists")
}
