package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/procgraph/procgraph/graph/embedded"
	neo4jstore "github.com/procgraph/procgraph/graph/neo4j"
	"github.com/procgraph/procgraph/procedures"
)

// driftCatalogue is the catalogue of the namespace's fc_ tools, which every
// fixture procedure calls one of (fillInput); changed, each takes a string
// id instead of an integer.
func driftCatalogue(ns string, changed bool) []procedures.Tool {
	typ := "integer"
	if changed {
		typ = "string"
	}
	var tools []procedures.Tool
	for i := range 3 {
		tools = append(tools, procedures.Tool{Name: fmt.Sprintf("%sfc_%03d", ns, i), ReadOnly: true,
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": typ}}}})
	}
	return tools
}

// driftStore is a store holding n fixture procedures whose versions have
// driftCatalogue(ns, false)'s contracts as their baseline: a fresh embedded
// store, or the shared Neo4j target's, opened again so that its backfill
// gives the versions the fill wrote their baselines.
func driftStore(b *testing.B, t *target, n int) procedures.Store {
	b.Helper()
	ctx := context.Background()
	cat, err := procedures.NewCatalogue(driftCatalogue(t.ns, false))
	if err != nil {
		b.Fatal(err)
	}
	if t.name == "embedded" {
		dir := b.TempDir()
		s, err := embedded.Open(filepath.Join(dir, "drift.db"), embedded.Options{NoSync: !*fsync})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close() })
		if err := s.PutCatalogue(ctx, cat); err != nil {
			b.Fatal(err)
		}
		own := &target{name: t.name, store: s, ns: t.ns}
		for lo := 0; lo < n; lo += 2000 {
			ins := make([]procedures.CaptureInput, 0, 2000)
			for i := lo; i < min(lo+2000, n); i++ {
				ins = append(ins, own.fillInput(i))
			}
			if err := s.CaptureBatch(ctx, ins); err != nil {
				b.Fatal(err)
			}
		}
		return s
	}
	if err := t.store.PutCatalogue(ctx, cat); err != nil {
		b.Fatal(err)
	}
	t.grow(b, n)
	cfg := neo4jstore.Config{URI: os.Getenv("NEO4J_URI"), Username: os.Getenv("NEO4J_USERNAME"), Password: os.Getenv("NEO4J_PASSWORD"), Database: os.Getenv("NEO4J_DATABASE")}
	s, err := neo4jstore.Open(ctx, cfg) // gives the fill's versions their baselines
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// BenchmarkDriftCatalogueChange: a catalogue change (PUT /v1/tools) that
// changes the contract of a tool every one of N procedures calls, then
// GET /v1/drift until it counts all N stale (or, changed back, none): the
// time until every version's staleness is known (known-ms; aim: 3 s
// embedded, 10 s Neo4j at 100k), with 4 clients reading GET /v1/procedures
// throughout. Reports the readers' p99 during the changes and, measured
// just before for as long, without them (quiet-p99-ms), side by side.
func BenchmarkDriftCatalogueChange(b *testing.B) {
	const readers = 4
	for _, t := range targets(b) {
		for _, n := range sizes() {
			b.Run(fmt.Sprintf("%s/n=%d", t.name, n), func(b *testing.B) {
				s := driftStore(b, t, n)
				srv := serve(b, s, nil)
				reads := func(d time.Duration, stop <-chan struct{}) []time.Duration {
					var mu sync.Mutex
					var all []time.Duration
					var wg sync.WaitGroup
					var done atomic.Bool
					for range readers {
						wg.Go(func() {
							var mine []time.Duration
							for !done.Load() {
								start := time.Now()
								if st, body := srv.do(b, "GET", "/v1/procedures?limit=25", nil); st != 200 {
									b.Errorf("GET /v1/procedures: %d %s", st, body)
									return
								}
								mine = append(mine, time.Since(start))
							}
							mu.Lock()
							all = append(all, mine...)
							mu.Unlock()
						})
					}
					if stop != nil {
						<-stop
					} else {
						time.Sleep(d)
					}
					done.Store(true)
					wg.Wait()
					return all
				}
				stale := func() int {
					st, body := srv.do(b, "GET", "/v1/drift?limit=25", nil)
					var page struct{ Total int }
					if st != 200 || json.Unmarshal(body, &page) != nil {
						b.Fatalf("GET /v1/drift: %d %s", st, body)
					}
					return page.Total
				}
				// Versions outside the fixture (another run's, on a shared
				// Neo4j) may be stale already: the changes add N to them.
				base := stale()
				var known, puts []time.Duration
				stop := make(chan struct{})
				during := make(chan []time.Duration)
				b.ResetTimer()
				start := time.Now()
				go func() { during <- reads(0, stop) }()
				for i := range b.N {
					changed := i%2 == 0
					want := base
					if changed {
						want = base + n
					}
					t0 := time.Now()
					if st, body := srv.do(b, "PUT", "/v1/tools", map[string]any{"tools": driftCatalogue(t.ns, changed)}); st != 200 {
						b.Fatalf("PUT /v1/tools: %d %s", st, body)
					}
					puts = append(puts, time.Since(t0))
					for stale() != want {
						time.Sleep(10 * time.Millisecond)
					}
					known = append(known, time.Since(t0))
				}
				close(stop)
				busy := <-during
				elapsed := time.Since(start)
				b.StopTimer()
				quiet := reads(elapsed, nil)
				b.ReportMetric(ms(quantile(known, 50)), "known-p50-ms")
				b.ReportMetric(ms(slices.Max(known)), "known-max-ms")
				b.ReportMetric(ms(quantile(puts, 50)), "put-p50-ms")
				b.ReportMetric(ms(quantile(busy, 99)), "read-p99-ms")
				b.ReportMetric(ms(quantile(quiet, 99)), "quiet-p99-ms")
				b.ReportMetric(float64(len(busy)), "reads")
			})
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// quantile is the q-th percentile of durs (sorted in place).
func quantile(durs []time.Duration, q int) time.Duration {
	if len(durs) == 0 {
		return 0
	}
	slices.Sort(durs)
	return durs[min(len(durs)-1, len(durs)*q/100)]
}
