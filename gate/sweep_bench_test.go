package gate_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/procgraph/procgraph/gate"

	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
)

// BenchmarkSweepEmbedded measures one sweep (Gate.Sweep) of an embedded
// store holding n turns that are done (succeeded) and nothing to change:
// the sweeper's steady cost, paid every DefaultSweepInterval.
func BenchmarkSweepEmbedded(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			ctx := context.Background()
			st, err := embedded.Open(filepath.Join(b.TempDir(), "procgraph.db"), embedded.Options{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			at := time.Now().Add(-time.Hour)
			for i := range n {
				r := storetest.PendingTurn("s", at.Add(time.Duration(i)*time.Microsecond), gate.DefaultApprovalTimeout)
				storetest.MustCreateApproval(b, st, r, 1, at)
				r.Status = gate.TurnSucceeded
				if _, err := st.TransitionTurn(ctx, r, []gate.TurnStatus{gate.TurnPending}, false, at); err != nil {
					b.Fatal(err)
				}
			}
			svc := procedures.NewService(st, procedures.Options{})
			g := gate.New(replay.New(svc, sandbox.NewInProcess(), &replaytest.Recorder{}, replay.Options{}), st, gate.Options{})
			b.ResetTimer()
			for b.Loop() {
				if changed, err := g.Sweep(ctx); err != nil || changed != 0 {
					b.Fatalf("sweep: %d, %v", changed, err)
				}
			}
		})
	}
}
