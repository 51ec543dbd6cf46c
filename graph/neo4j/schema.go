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
// mix), and waits until the indexes are online. Several instances starting
// at once are fine: a rule another one just created is not an error.
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
	return err
}

func alreadyExists(err error) bool {
	var ne *neo4j.Neo4jError
	return errors.As(err, &ne) && strings.HasPrefix(ne.Code, "Neo.ClientError.Schema.") && strings.HasSuffix(ne.Code, "AlreadyExists")
}
