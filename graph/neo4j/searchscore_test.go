package neo4j

import (
	"fmt"
	"testing"

	"github.com/procgraph/procgraph/cypher"
	"github.com/procgraph/procgraph/search"
)

// TestSearchScoreIsGos checks fragments/search_score.cypher, the ranking
// search.cypher applies, against search.Score over text scores and
// frequencies (ADR 0017: a rule both stores apply is one Go definition,
// Cypher's copy a checked fragment).
func TestSearchScoreIsGos(t *testing.T) {
	s := openStore(t)
	stmt := "WITH $score AS score, {frequency: $frequency} AS p RETURN\n" + cypher.Expand("#include search_score") + " AS ranked"
	for _, text := range []float64{0, 0.000001, 0.1234567, 0.5, 1, 1.7320508, 3.25, 12.0000005, 987.654321} {
		for _, freq := range []int64{0, 1, 2, 7, 100, 12345, 1 << 40} {
			t.Run(fmt.Sprintf("score %v frequency %d", text, freq), func(t *testing.T) {
				recs := run(t, s, stmt, map[string]any{"score": text, "frequency": freq, "frequency_weight": search.FrequencyWeight})
				got, ok := recs[0].Values[0].(float64)
				if want := search.Score(text, freq); !ok || got != want {
					t.Fatalf("search_score.cypher = %v, search.Score = %v", recs[0].Values[0], want)
				}
			})
		}
	}
}
