package neo4jstore

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
// procedures that lack it (backfillRank) and classifies those not yet
// classified (backfillClasses). Several instances starting at once
// are fine: a rule another one just created is not an error, and the
// backfill is idempotent.
func (s *Store) applySchema(ctx context.Context) error {
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
	return s.backfillClasses(ctx)
}

// rankBatch is the number of procedures backfillRank updates per transaction.
const rankBatch = 10_000

// backfillRank sets the rank (the key find_all_page.cypher orders by) of
// every procedure that has none (a database written before rank existed),
// rankBatch procedures per transaction (rank_backfill.cypher), until a batch
// finds fewer: a database that is up to date costs one scan of the
// procedures.
func (s *Store) backfillRank(ctx context.Context) error {
	for {
		n, err := writeTx(ctx, s, "schema", func(ctx context.Context, tx neo4j.ManagedTransaction) (int64, error) {
			recs, err := collect(ctx, tx, "rank_backfill", map[string]any{"batch": rankBatch})
			if err != nil {
				return 0, err
			}
			if len(recs) != 1 {
				return 0, errRows("rank_backfill", len(recs))
			}
			n, _ := field(recs[0], "updated").(int64)
			return n, nil
		})
		if err != nil || n < rankBatch {
			return err
		}
	}
}

func alreadyExists(err error) bool {
	var ne *neo4j.Neo4jError
	return errors.As(err, &ne) && strings.HasPrefix(ne.Code, "Neo.ClientError.Schema.") && strings.HasSuffix(ne.Code, "AlreadyExists")
}
