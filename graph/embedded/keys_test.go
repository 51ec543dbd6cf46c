package embedded

import (
	"bytes"
	"testing"

	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/internal/findorder"
)

// TestRankKeyIsCompareFind: the rank index's byte order is Find's order,
// findorder.Compare, on every edge of it, and rankFields decodes what
// rankKey encoded.
func TestRankKeyIsCompareFind(t *testing.T) {
	keys := storetest.FindKeys()
	for _, a := range keys {
		ka := rankKey(a.Frequency, a.LastUsedAt, a.Name)
		if f, lu := rankFields(ka); f != a.Frequency || (lu == nil) != (a.LastUsedAt == nil) || lu != nil && *lu != *a.LastUsedAt || rankName(ka) != a.Name {
			t.Fatalf("rankFields(rankKey(%+v)) = %d, %v, %q", a, f, lu, rankName(ka))
		}
		for _, b := range keys {
			got, want := bytes.Compare(ka, rankKey(b.Frequency, b.LastUsedAt, b.Name)), findorder.Compare(a, b)
			if sign(got) != sign(want) {
				t.Fatalf("rankKey orders %+v against %+v as %d, findorder.Compare as %d", a, b, got, want)
			}
		}
	}
}

func sign(c int) int { return max(-1, min(1, c)) }
