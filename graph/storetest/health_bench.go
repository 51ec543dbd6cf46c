package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
)

// BenchRecordRun measures what health adds to the write of a replay: a
// RecordUse of a successful replay with its run (the health vector and
// the demotion applied in the same statement) against the same use
// without a run, interleaved (each iteration one of each, alternating
// which goes first), on a procedure whose usage key is already counted
// (the warm replay's write). It reports run-ns/op, norun-ns/op and their
// ratio.
func BenchRecordRun(b *testing.B, s procedures.Store) {
	ctx := context.Background()
	in := In(sigAB, "h1", "bench", Base)
	MustCapture(b, s, in)
	name := in.Name
	var withRun, without time.Duration
	use := func(run bool) time.Duration {
		u := procedures.UseInput{Name: name, UsageKey: "bench", Replay: true, At: time.Now(), DemoteAfter: health.DefaultDemoteAfter}
		if run {
			u.Run = &health.Run{Duration: 3 * time.Millisecond, At: u.At}
		}
		start := time.Now()
		if _, err := s.RecordUse(ctx, u); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	use(true)
	use(false)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			withRun += use(true)
			without += use(false)
		} else {
			without += use(false)
			withRun += use(true)
		}
		i++
	}
	b.ReportMetric(float64(withRun.Nanoseconds())/float64(i), "run-ns/op")
	b.ReportMetric(float64(without.Nanoseconds())/float64(i), "norun-ns/op")
	b.ReportMetric(float64(withRun)/float64(without), "run/norun")
}
