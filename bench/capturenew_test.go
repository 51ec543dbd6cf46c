package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// newSeq numbers the procedures BenchmarkCaptureNewConcurrent creates, over
// every run of it in this process.
var newSeq atomic.Int64

// BenchmarkCaptureNewConcurrent captures a new procedure per capture from
// 16 clients at once, through the store and over HTTP, at N = 1k: every
// capture adds a search document, so the full-text index's work is in it
// (captureConcurrent's clients capture existing procedures). Reports
// captures/s and the median and 90th percentile of one capture.
func BenchmarkCaptureNewConcurrent(b *testing.B) {
	const clients, n = 16, 1000
	for _, t := range targets(b) {
		t.grow(b, n)
		srv := serve(b, t.store, nil)
		for _, via := range []string{"store", "http"} {
			b.Run(fmt.Sprintf("%s/n=%d/%s/clients=%d", t.name, n, via, clients), func(b *testing.B) {
				var next atomic.Int64
				var wg sync.WaitGroup
				durs := make([][]time.Duration, clients)
				b.ResetTimer()
				for c := range clients {
					wg.Go(func() {
						for next.Add(1) <= int64(b.N) {
							i := newSeq.Add(1)
							start := time.Now()
							if via == "store" {
								in := captureInput([]string{fmt.Sprintf("%scn_%s_%d", t.ns, runID, i), t.ns + "z"}, "h", key(), time.Now())
								if res, err := t.store.Capture(context.Background(), in); err != nil || !res.Created {
									b.Errorf("%+v %v", res, err)
									return
								}
							} else if st, body := srv.do(b, "POST", "/v1/procedures", map[string]any{"code": code(t.ns, fmt.Sprintf("hcn_%s_%d", runID, i), "z")}); st != 201 {
								b.Errorf("%d %s", st, body)
								return
							}
							durs[c] = append(durs[c], time.Since(start))
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "captures/s")
				reportQuantiles(b, slices.Concat(durs...))
			})
		}
	}
}
