package neo4j

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// AuthRevision returns the store's authorization revision: one statement
// (auth_revision.cypher) reading the AuthRevision node, which every write
// that can change what a grant or a session policy decides moves in its
// own transaction (fragments/auth_bump.cypher, queries/auth_bump.cypher).
func (s *Store) AuthRevision(ctx context.Context) (uint64, error) {
	recs, err := query(ctx, s, "auth revision", neo4j.AccessModeRead, "auth_revision", nil)
	if err != nil {
		return 0, err
	}
	if len(recs) != 1 {
		return 0, s.mapError("auth revision", errRows("auth_revision", len(recs)))
	}
	rev, _ := field(recs[0], "revision").(int64)
	if rev < 0 {
		rev = 0
	}
	return uint64(rev), nil
}
