package neo4j

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/graphview"
)

var _ graphview.EdgeCounter = (*Store)(nil)

// CountEdges returns the graph's CALLS and INVESTIGATED_BY edges
// (edge_counts.cypher), see graphview.EdgeCounter.
func (s *Store) CountEdges(ctx context.Context) (calls, investigatedBy int, err error) {
	recs, err := query(ctx, s, "count edges", neo4j.AccessModeRead, "edge_counts", nil)
	if err != nil {
		return 0, 0, err
	}
	if len(recs) != 1 {
		return 0, 0, s.mapError("count edges", errRows("edge_counts", len(recs)))
	}
	n := func(k string) int { v, _ := field(recs[0], k).(int64); return int(v) }
	return n("calls"), n("investigated"), nil
}
