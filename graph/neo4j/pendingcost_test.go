package neo4j

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/graph/storetest"
)

// TestPendingBoundsCostNoStatement: creating an approval checks both
// pending bounds (the total and the requester's) in the one statement that
// creates it, admitted or refused: the per-requester bound adds no round
// trip to Neo4j.
func TestPendingBoundsCostNoStatement(t *testing.T) {
	s := freshStore(t)
	b := gate.PendingBounds{Total: 10, PerRequester: 1}
	for _, c := range []struct {
		name string
		want fault.Code
	}{{"admitted", ""}, {"refused for the requester", fault.CodeBusy}} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			n := map[string]int{}
			ctx := WithQueryObserver(context.Background(), func(q string, _, _ time.Duration) { mu.Lock(); n[q]++; mu.Unlock() })
			err := s.CreateApproval(ctx, storetest.PendingTurn("s", storetest.At(0), time.Minute), b, storetest.At(0))
			if fault.ErrorCode(err) != c.want {
				t.Fatalf("CreateApproval: %v, want %q", err, c.want)
			}
			mu.Lock()
			defer mu.Unlock()
			var got []string
			for q, k := range n {
				got = append(got, fmt.Sprintf("%s×%d", q, k))
			}
			sort.Strings(got)
			if s := strings.Join(got, " "); s != "turn_create×1" {
				t.Fatalf("statements %s, want turn_create×1", s)
			}
		})
	}
}
