package neo4j

import (
	"strings"
	"testing"

	"github.com/procgraph/procgraph/cypher"
	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/internal/findorder"
)

// TestRankKeyIsCompareFind: fragments/rank_key.cypher, the p.rank that
// rank_set stores and Find walks, sorts as findorder.Compare on every
// edge of Find's order.
func TestRankKeyIsCompareFind(t *testing.T) {
	s := openStore(t)
	keys := storetest.FindKeys()
	rows := make([]any, len(keys))
	for i, k := range keys {
		row := map[string]any{"i": i, "frequency": k.Frequency, "name": k.Name, "lu": nil}
		if k.LastUsedAt != nil {
			row["lu"] = *k.LastUsedAt
		}
		rows[i] = row
	}
	stmt := "UNWIND $rows AS r\nWITH r.i AS i, {frequency: r.frequency, name: r.name, last_used_at: CASE WHEN r.lu IS NULL THEN null ELSE datetime({epochMillis: r.lu}) END} AS p\nRETURN i,\n" +
		cypher.Expand("#include rank_key") + " AS rank"
	recs := run(t, s, stmt, map[string]any{"rows": rows})
	if len(recs) != len(keys) {
		t.Fatalf("%d ranks for %d keys", len(recs), len(keys))
	}
	ranks := make([]string, len(recs))
	for _, rec := range recs {
		i, _ := rec.Values[0].(int64)
		ranks[i], _ = rec.Values[1].(string)
	}
	for i, a := range keys {
		for j, b := range keys {
			got, want := strings.Compare(ranks[i], ranks[j]), findorder.Compare(a, b)
			if sign(got) != sign(want) {
				t.Fatalf("rank_key orders %+v (%q) against %+v (%q) as %d, findorder.Compare as %d", a, ranks[i], b, ranks[j], got, want)
			}
		}
	}
}

func sign(c int) int { return max(-1, min(1, c)) }
