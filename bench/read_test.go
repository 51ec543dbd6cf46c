package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	neo4jstore "github.com/procgraph/procgraph/graph/neo4j"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
)

// BenchmarkFind measures store.Find pages of 25 at each N: the top page
// (flat in N: the rank index), a page at offset 500, and the planner's page
// (exposed, no total). On Neo4j it also reports the server's own time for
// the same statements (ResultAvailableAfter + ResultConsumedAfter, summed
// over the statements of each call) and x-server, the ratio of the MEANS
// Find / server (aim ≤ 1.5). Means, not medians: Neo4j reports whole
// milliseconds, each the difference of two millisecond clock readings, so
// one reading is 0 or 1 for a statement of 0.5 ms (its median says
// nothing), while the mean over many runs is an unbiased estimate of the
// true time (BenchmarkServerClock checks this). The medians are reported
// too (p50-ms, server-p50-ms).
func find(b *testing.B, t *target, n int) {
	ctx := context.Background()
	exposed := true
	queries := []struct {
		name string
		q    procedures.Query
	}{
		{"top25", procedures.Query{Limit: 25}},
		{"top25_offset500", procedures.Query{Limit: 25, Offset: 500}},
		{"planner25", procedures.Query{Limit: 25, Exposed: &exposed, AllowMutating: true, SkipTotal: true}},
		// A tool every fixture procedure up to 40k calls: the page fills at
		// once, and the total is counted.
		{"tool_common25", procedures.Query{Limit: 25, Tools: []string{t.ns + "fc_000"}}},
		// The same with a summary filter: the total is counted among the
		// exposed procedures only.
		{"tool_common_exposed25", procedures.Query{Limit: 25, Tools: []string{t.ns + "fc_000"}, Exposed: &exposed, AllowMutating: true}},
		// A tool one in 200 fixture procedures call, and a summary filter, as
		// reuse suggestions ask (at 1k: 5 match, every procedure is read).
		{"tools_rare_exposed25", procedures.Query{Limit: 25, Tools: []string{t.ns + "fa_007"}, Exposed: &exposed, AllowMutating: true, SkipTotal: true}},
	}
	for _, q := range queries {
		// Warm up: the fill makes the server plan the statements again.
		for range 5 {
			if _, _, err := t.store.Find(ctx, q.q); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("%s/n=%d/find/%s", t.name, n, q.name), func(b *testing.B) {
			serverTimed(ctx, b, func(ctx context.Context) {
				if ps, _, err := t.store.Find(ctx, q.q); err != nil || len(ps) != min(25, n/200) && len(ps) != 25 {
					b.Fatalf("Find: %d, %v", len(ps), err)
				}
			})
		})
	}
	// The floor: Ping, one trivial statement (RETURN 1) through the same
	// managed read transaction as a Find statement; its wall time less its
	// server time is what a Find pays whatever its page.
	b.Run(fmt.Sprintf("%s/n=%d/find/ping", t.name, n), func(b *testing.B) {
		serverTimed(ctx, b, func(ctx context.Context) {
			if err := t.store.Ping(ctx); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// serverTimed runs op b.N times and reports its quantiles (loop) and, on
// Neo4j, the server's own time for the statements of each call
// (ResultAvailableAfter + ResultConsumedAfter) and x-server, the ratio of
// the MEANS wall / server, with mean-ms and server-mean-ms (see find).
func serverTimed(ctx context.Context, b *testing.B, op func(ctx context.Context)) {
	var mu sync.Mutex
	var call time.Duration // the server's time in this call
	var server []time.Duration
	observed := false
	fctx := neo4jstore.WithQueryObserver(ctx, func(_ string, available, consumed time.Duration) {
		mu.Lock()
		call += available + consumed
		observed = true
		mu.Unlock()
	})
	var walls time.Duration
	loop(b, func(int) {
		call = 0
		start := time.Now()
		op(fctx)
		walls += time.Since(start)
		server = append(server, call)
	})
	if observed && len(server) > 0 {
		var sum time.Duration
		for _, d := range server {
			sum += d
		}
		mean, wall := msOf(sum)/float64(len(server)), msOf(walls)/float64(len(server))
		slices.Sort(server)
		b.ReportMetric(msOf(server[len(server)/2]), "server-p50-ms")
		b.ReportMetric(wall, "mean-ms")
		b.ReportMetric(mean, "server-mean-ms")
		if mean > 0 {
			b.ReportMetric(wall/mean, "x-server")
		}
	}
}

// BenchmarkPlannerView compares in one run the planner view over HTTP
// (GET /v1/procedures/tools?limit=25: classification, exposure, descriptors,
// JSON) with the store.Find page it reads (aim: HTTP ≤ 1.3× store.Find,
// medians).
func plannerView(b *testing.B, t *target, srv *server, n int) {
	ctx := context.Background()
	exposed := true
	q := procedures.Query{Limit: 25, Exposed: &exposed, AllowMutating: true, SkipTotal: true}
	perOp := map[string]time.Duration{}
	for range 5 {
		if st, body := srv.do(b, "GET", "/v1/procedures/tools?limit=25", nil); st != 200 {
			b.Fatalf("%d %s", st, body)
		}
	}
	b.Run(fmt.Sprintf("%s/n=%d/planner/store_find", t.name, n), func(b *testing.B) {
		perOp["find"] = loop(b, func(int) {
			if ps, _, err := t.store.Find(ctx, q); err != nil || len(ps) != 25 {
				b.Fatalf("Find: %d, %v", len(ps), err)
			}
		})
	})
	b.Run(fmt.Sprintf("%s/n=%d/planner/http", t.name, n), func(b *testing.B) {
		perOp["http"] = loop(b, func(int) {
			if st, body := srv.do(b, "GET", "/v1/procedures/tools?limit=25", nil); st != 200 {
				b.Fatalf("%d %s", st, body)
			}
		})
		if perOp["find"] > 0 {
			b.ReportMetric(float64(perOp["http"])/float64(perOp["find"]), "x-find")
		}
	})
}

// BenchmarkListVsHealthz compares in one run GET /v1/procedures (a page of
// 25 of 10k) with GET /healthz on the same server (aim, embedded: ≤ 3×,
// medians).
func BenchmarkListVsHealthz(b *testing.B) {
	t, err := embeddedTarget()
	if err != nil {
		b.Fatal(err)
	}
	srv := serve(b, t.store, nil)
	t.grow(b, 10_000)
	perOp := map[string]time.Duration{}
	for _, p := range []struct{ name, path string }{{"healthz", "/healthz"}, {"list", "/v1/procedures"}} {
		for range 5 {
			srv.do(b, "GET", p.path, nil)
		}
		b.Run(t.name+"/"+p.name, func(b *testing.B) {
			b.ReportAllocs()
			perOp[p.name] = loop(b, func(int) {
				if st, body := srv.do(b, "GET", p.path, nil); st != 200 {
					b.Fatalf("%d %s", st, body)
				}
			})
			if p.name == "list" && perOp["healthz"] > 0 {
				b.ReportMetric(float64(perOp["list"])/float64(perOp["healthz"]), "x-healthz")
			}
		})
	}
}

// BenchmarkReplay measures a library replay end to end (load, classify,
// decide and audit, run, count) of a read-only procedure making 2 and 10
// tool calls, in the warm worker pool and in process, on an embedded store
// of its own (aim: warm < 1 ms).
func BenchmarkReplay(b *testing.B) {
	ctx := context.Background()
	t, err := embeddedTarget()
	if err != nil {
		b.Fatal(err)
	}
	tools := []procedures.Tool{{Name: t.ns + "get", ReadOnly: true}, {Name: t.ns + "fetch", ReadOnly: true}}
	for _, runner := range []struct {
		name string
		r    sandbox.Runner
	}{{"pool", pool}, {"inprocess", sandbox.NewInProcess()}} {
		srv := serve(b, t.store, runner.r)
		if _, err := srv.svc.PutCatalogue(ctx, tools, "bench"); err != nil {
			b.Fatal(err)
		}
		for _, calls := range []int{2, 10} {
			var code strings.Builder
			code.WriteString("out = []\n")
			for i := range calls {
				fmt.Fprintf(&code, "out.append(tools.%s(task_id=task_id, i=%d))\n", tools[i%2].Name, i)
			}
			code.WriteString("return out")
			out, err := srv.svc.Capture(ctx, procedures.CaptureRequest{Code: code.String()})
			if err != nil {
				b.Fatal(err)
			}
			req := replay.InvokeRequest{Name: out.Procedure.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 7}, SessionID: "bench"}
			if res, err := srv.rp.Invoke(ctx, req); err != nil || res.Status != replay.StatusSucceeded {
				b.Fatalf("warm-up: %+v %v", res, err)
			}
			b.Run(fmt.Sprintf("%s/calls=%d", runner.name, calls), func(b *testing.B) {
				b.ReportAllocs()
				loop(b, func(int) {
					if res, err := srv.rp.Invoke(ctx, req); err != nil || res.Status != replay.StatusSucceeded {
						b.Fatalf("%+v %v", res, err)
					}
				})
			})
		}
	}
}

// msOf is d in milliseconds.
func msOf(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
