package neo4j

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/procedures"
)

// TestFindToolFilterPlans: find_filtered.cypher reads a tool filter's page
// either by walking the rank index or from the callers of the rarest tool
// (by degree, offset and limit); both give Find's order and total. Pages of
// one (a common tool: the walk) must be the full answer's (no limit: the
// callers) one by one, and two tools read from the rarer's callers.
func TestFindToolFilterPlans(t *testing.T) {
	ctx := context.Background()
	s := freshStore(t)
	at := time.Now()
	const n = 30
	for i := range n {
		sig := []string{"common", fmt.Sprintf("own%02d", i)}
		if i%10 == 0 {
			sig = append(sig, "rare")
		}
		in := procedures.CaptureInput{
			Name: procedures.ProcPrefix + strings.Join(sig, "__"), Signature: sig,
			Version:  procedures.Version{CodeHash: "h", Code: "return 1", Dialect: "starlark", Status: procedures.StatusSucceeded},
			UsageKey: "k", At: at.Add(time.Duration(i) * time.Second),
		}
		for k := range i % 4 { // frequencies 1..4: the rank is not the name order
			in.UsageKey = fmt.Sprint("k", k)
			if _, err := s.Capture(ctx, in); err != nil {
				t.Fatal(err)
			}
		}
		if i%4 == 0 {
			if _, err := s.Capture(ctx, in); err != nil {
				t.Fatal(err)
			}
		}
	}
	names := func(ps []*procedures.Procedure) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = p.Name
		}
		return out
	}
	all, total, err := s.Find(ctx, procedures.Query{Tools: []string{"common"}})
	if err != nil || total != n || len(all) != n {
		t.Fatalf("Find(common): %d, total %d, %v; want %d", len(all), total, err, n)
	}
	for i := range n {
		page, total, err := s.Find(ctx, procedures.Query{Tools: []string{"common"}, Limit: 1, Offset: i})
		if err != nil || total != n || len(page) != 1 || page[0].Name != all[i].Name {
			t.Fatalf("Find(common, offset %d, limit 1) = %v, total %d, %v; want [%s], %d", i, names(page), total, err, all[i].Name, n)
		}
	}
	var want []string
	for _, p := range all {
		if slices.Contains(p.Signature, "rare") {
			want = append(want, p.Name)
		}
	}
	for _, limit := range []int{0, 1, 2, 3} {
		page, total, err := s.Find(ctx, procedures.Query{Tools: []string{"common", "rare"}, Limit: limit})
		end := len(want)
		if limit > 0 {
			end = min(limit, end)
		}
		if err != nil || total != len(want) || !slices.Equal(names(page), want[:end]) {
			t.Fatalf("Find(common, rare, limit %d) = %v, total %d, %v; want %v, %d", limit, names(page), total, err, want[:end], len(want))
		}
	}
	if page, total, err := s.Find(ctx, procedures.Query{Tools: []string{"common", "nowhere"}}); err != nil || total != 0 || len(page) != 0 {
		t.Fatalf("Find(common, nowhere) = %v, total %d, %v; want nothing", names(page), total, err)
	}
}
