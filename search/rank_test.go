package search_test

import (
	"testing"

	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/internal/findorder"
	"github.com/procgraph/procgraph/search"
)

// TestCompareTiesAreFinds: hits of equal score are in Find's order,
// findorder.Compare, on every edge of it.
func TestCompareTiesAreFinds(t *testing.T) {
	keys := storetest.FindKeys()
	hit := func(k findorder.Key) search.Hit {
		return search.Hit{Name: k.Name, Score: 1.5, Frequency: k.Frequency, LastUsedAt: k.LastUsedAt}
	}
	for _, a := range keys {
		for _, b := range keys {
			if got, want := sign(search.Compare(hit(a), hit(b))), sign(findorder.Compare(a, b)); got != want {
				t.Fatalf("Compare orders %+v against %+v as %d, findorder.Compare as %d", a, b, got, want)
			}
		}
	}
	low, high := hit(keys[len(keys)-1]), hit(keys[0])
	low.Score, high.Score = 1, 2
	if search.Compare(high, low) >= 0 {
		t.Fatal("a higher score does not come first")
	}
}

func sign(c int) int { return max(-1, min(1, c)) }
