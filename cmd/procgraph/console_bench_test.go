package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// mustFillProcedures captures n procedures with distinct signatures (pairs
// of made-up tools, unknown to the catalogue) through the API, with a few
// clients at once.
func mustFillProcedures(tb testing.TB, s *server, n int) {
	tb.Helper()
	const tools = 160 // 160*159/2 = 12720 pairs
	jobs := make(chan [2]int)
	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range jobs {
				code := fmt.Sprintf("a = tools.tool_%03d(task_id=task_id)\nreturn tools.tool_%03d(x=a)\n", p[0], p[1])
				r := s.send(tb, req{Method: "POST", Path: "/v1/procedures", Body: map[string]any{"code": code,
					"summary": fmt.Sprintf("procedure %d-%d", p[0], p[1]), "cause": map[string]any{"name": fmt.Sprintf("cause %d", p[0]%40)}}})
				if r.Status != 201 {
					tb.Errorf("capture: %d %s", r.Status, r.Body)
					return
				}
			}
		}()
	}
	sent := 0
	for i := 0; i < tools && sent < n; i++ {
		for j := i + 1; j < tools && sent < n; j++ {
			jobs <- [2]int{i, j}
			sent++
		}
	}
	close(jobs)
	wg.Wait()
	if tb.Failed() {
		tb.FailNow()
	}
}

// BenchmarkConsoleProcedures10k: the procedures page of a server holding
// 10,000 procedures, from navigation to its first table rendered (a fresh
// page load each time: HTML, modules, cytoscape, the API call, the table).
// Reports ms/page.
func BenchmarkConsoleProcedures10k(b *testing.B) {
	tab := mustBrowser(b)
	s := mustServe(b, serverOpts{})
	start := time.Now()
	mustFillProcedures(b, s, 10000)
	var all struct{ Total int }
	s.get(b, "/v1/procedures?limit=1").Into(b, &all)
	if all.Total != 10000 {
		b.Fatalf("total %d", all.Total)
	}
	b.Logf("filled 10,000 procedures in %v", time.Since(start).Round(time.Millisecond))
	b.ResetTimer()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		tab.run(b, chromedp.Navigate("about:blank"))
		t0 := time.Now()
		tab.run(b, chromedp.Navigate(s.URL+"/ui/#/procedures"))
		tab.waitJS(b, `document.querySelectorAll('#procedures tbody tr').length === 25`)
		total += time.Since(t0)
	}
	b.StopTimer()
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/page")
	if got := tab.text(b, "#range"); got != "1–25 of 10000" {
		b.Fatalf("range %q", got)
	}
	tab.screenshot(b, "bench-procedures-10k")
}

// syntheticGraph is a GET /v1/graph answer with nodes nodes (a tenth
// causes, a third tools, the rest procedures) and edges edges.
func syntheticGraph(nodes, edges int) map[string]any {
	type node struct {
		ID         string         `json:"id"`
		Kind       string         `json:"kind"`
		Label      string         `json:"label"`
		Properties map[string]any `json:"properties"`
	}
	type edge struct {
		Source    string `json:"source"`
		Target    string `json:"target"`
		Kind      string `json:"kind"`
		Frequency int    `json:"frequency"`
	}
	classes := []string{"read_only", "state_changing", "unknown"}
	var ns []node
	var causes, procs, tools []string
	for i := 0; i < nodes; i++ {
		switch {
		case i%10 == 0:
			id := fmt.Sprintf("cause:c%d", i)
			causes = append(causes, id)
			ns = append(ns, node{id, "cause", id[6:], map[string]any{}})
		case i%3 == 0:
			id := fmt.Sprintf("tool:t%d", i)
			tools = append(tools, id)
			ns = append(ns, node{id, "tool", id[5:], map[string]any{"class": classes[i%2]}})
		default:
			id := fmt.Sprintf("procedure:p%d", i)
			procs = append(procs, id)
			ns = append(ns, node{id, "procedure", id[10:], map[string]any{"frequency": i % 23, "class": classes[i%3]}})
		}
	}
	seen := map[string]bool{}
	var es []edge
	rng := rand.New(rand.NewPCG(1, 2))
	for k := 0; len(es) < edges; k++ {
		p := procs[rng.IntN(len(procs))]
		var e edge
		if k%3 == 0 {
			e = edge{causes[rng.IntN(len(causes))], p, "INVESTIGATED_BY", 1 + rng.IntN(9)}
		} else {
			e = edge{p, tools[rng.IntN(len(tools))], "CALLS", 0}
		}
		if key := e.Source + "|" + e.Target; !seen[key] {
			seen[key] = true
			es = append(es, e)
		}
	}
	return map[string]any{"nodes": ns, "edges": es, "truncated": false}
}

// BenchmarkConsoleGraph2000: the graph explorer draws a graph of 2,000
// nodes and 5,000 edges: from handing it the graph to the layout done and
// the view answering a zoom (two animation frames later). Measured in the
// page (performance.now); reports ms/graph for the default layout.
func BenchmarkConsoleGraph2000(b *testing.B) {
	tab := mustBrowser(b)
	s := mustServe(b, serverOpts{})
	mustCaptureExamples(b, s, "input dataset unavailable")
	g, err := json.Marshal(syntheticGraph(2000, 5000))
	if err != nil {
		b.Fatal(err)
	}
	tab.open(b, s.URL, "#/graph")
	tab.waitJS(b, `window.procgraphExplorer.ready`)
	tab.run(b, chromedp.Evaluate(`window.__bigGraph = `+string(g)+`; true`, nil))
	tab.run(b, performance.Enable().WithTimeDomain(performance.EnableTimeDomainThreadTicks))
	b.ResetTimer()
	var total, cpu float64
	for i := 0; i < b.N; i++ {
		before := threadTime(b, tab)
		var ms float64
		tab.run(b, chromedp.Evaluate(`(async () => {
			const ex = window.procgraphExplorer;
			const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
			const t0 = performance.now();
			ex.load(window.__bigGraph);
			while (!ex.ready) await new Promise((r) => setTimeout(r, 5));
			ex.cy.zoom({level: ex.cy.zoom() * 1.5, renderedPosition: {x: 300, y: 300}});
			await frame(); await frame();
			const t = ex.timing;
			console.log('timing build', t.built - t0, 'layout', t.laidOut - t.built, 'frames', performance.now() - t.laidOut);
			window.__timing = [t.built - t0, t.laidOut - t.built, performance.now() - t.laidOut];
			return performance.now() - t0;
		})()`, &ms, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
		total += ms
		cpu += threadTime(b, tab) - before
		var steps []float64
		tab.eval(b, `window.__timing`, &steps)
		b.Logf("build %.0f ms, layout %.0f ms, zoom and two frames %.0f ms", steps[0], steps[1], steps[2])
	}
	b.StopTimer()
	b.ReportMetric(total/float64(b.N), "ms/graph")
	b.ReportMetric(cpu*1000/float64(b.N), "cpu-ms/graph")
	var n struct{ Nodes, Edges int }
	tab.eval(b, `({nodes: window.procgraphExplorer.cy.nodes().length, edges: window.procgraphExplorer.cy.edges().length})`, &n)
	if n.Nodes != 2000 || n.Edges != 5000 {
		b.Fatalf("drew %+v", n)
	}
	tab.screenshot(b, "bench-graph-2000")
}

// threadTime is the page's main-thread CPU time in seconds (Chrome's
// ThreadTime metric): what the page cost, whatever else the machine runs.
func threadTime(tb testing.TB, tab *browserTab) float64 {
	tb.Helper()
	var v float64
	tab.run(tb, chromedp.ActionFunc(func(ctx context.Context) error {
		ms, err := performance.GetMetrics().Do(ctx)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if m.Name == "ThreadTime" {
				v = m.Value
			}
		}
		return nil
	}))
	return v
}
