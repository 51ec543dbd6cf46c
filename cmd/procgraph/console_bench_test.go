package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// fillTools is how many made-up tools the fills pair: 160*159/2 = 12720
// pairs.
const fillTools = 160

// mustFillProcedures captures n procedures with distinct signatures (pairs
// of made-up tools, unknown to the catalogue) through the API, with a few
// clients at once; the pairs in order, (0,1), (0,2), ….
func mustFillProcedures(tb testing.TB, s *server, n int) {
	tb.Helper()
	mustFillPairs(tb, s, func(send func(a, b int) bool) {
		for i := 0; i < fillTools; i++ {
			for j := i + 1; j < fillTools; j++ {
				if !send(i, j) {
					return
				}
			}
		}
	}, n)
}

// mustFillPairs captures a procedure of each tool pair pairs sends (send
// reports false once n were sent), with six clients at once.
func mustFillPairs(tb testing.TB, s *server, pairs func(send func(a, b int) bool), n int) {
	tb.Helper()
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
	pairs(func(a, b int) bool {
		if sent >= n {
			return false
		}
		jobs <- [2]int{a, b}
		sent++
		return true
	})
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

// BenchmarkConsoleProcedures10kSearch: the procedures page of a server
// holding 10,000 procedures opened on a search (the API's q), from
// navigation to its first rows rendered, measured in the page: the
// console's procgraph:rendered mark (performance.now, ms since the
// navigation began). Reports ms/first-rows.
func BenchmarkConsoleProcedures10kSearch(b *testing.B) {
	tab := mustBrowser(b)
	s := mustServe(b, serverOpts{})
	mustFillProcedures(b, s, 10000)
	var want struct{ Total int }
	s.get(b, "/v1/procedures?q=tool_042&limit=1").Into(b, &want)
	if want.Total == 0 {
		b.Fatal("the search finds nothing")
	}
	b.ResetTimer()
	var total, apiTotal, worst float64
	for i := 0; i < b.N; i++ {
		tab.run(b, chromedp.Navigate("about:blank"))
		tab.run(b, chromedp.Navigate(s.URL+"/ui/#/procedures?q=tool_042"))
		tab.waitJS(b, `document.querySelectorAll('#procedures tbody tr').length === 25 && performance.getEntriesByName('procgraph:rendered').length > 0`)
		var m struct{ Rendered, API, Scripts float64 }
		tab.eval(b, `(() => { const r = performance.getEntriesByType('resource');
			const api = r.filter((e) => e.name.includes('/v1/procedures?')).map((e) => e.duration);
			const js = r.filter((e) => e.name.endsWith('.js')).map((e) => e.responseEnd);
			return { rendered: performance.getEntriesByName('procgraph:rendered')[0].startTime, api: api.length ? api[0] : -1, scripts: Math.max(...js) }; })()`, &m)
		b.Logf("first rows at %.0f ms: scripts loaded by %.0f ms, the search answered in %.0f ms", m.Rendered, m.Scripts, m.API)
		total += m.Rendered
		apiTotal += m.API
		worst = max(worst, m.Rendered)
	}
	b.StopTimer()
	b.ReportMetric(total/float64(b.N), "ms/first-rows")
	b.ReportMetric(apiTotal/float64(b.N), "api-ms/search")
	b.ReportMetric(worst, "max-ms/first-rows")
	if got := tab.text(b, "#range"); got != fmt.Sprintf("1–25 of %d", want.Total) {
		b.Fatalf("range %q, want of %d", got, want.Total)
	}
	tab.screenshot(b, "bench-procedures-10k-search")
}

// BenchmarkConsoleGraph1k: the graph explorer with 1,000 procedures and
// 3,000 edges (realisticGraph, handed to the page): the first layout, from
// handing it the graph to the view laid out and decluttered (ms/layout,
// performance.now in the page), then 40 pan and zoom steps, each timed from
// the step to the frame that drew it (ms/frame: the mean, and the worst),
// and the main thread's CPU for them (CDP's ThreadTime). Also logs the
// same without clusters (1,210 nodes drawn).
func BenchmarkConsoleGraph1k(b *testing.B) {
	tab := mustBrowser(b)
	s := mustServe(b, serverOpts{})
	mustCaptureExamples(b, s, "input dataset unavailable")
	g, err := json.Marshal(realisticGraph(1000, 60, 150))
	if err != nil {
		b.Fatal(err)
	}
	tab.open(b, s.URL, "#/graph")
	tab.waitJS(b, `window.procgraphExplorer.ready`)
	tab.run(b, chromedp.Evaluate(`window.__graph1k = `+string(g)+`; true`, nil))
	tab.run(b, performance.Enable().WithTimeDomain(performance.EnableTimeDomainThreadTicks))
	type run struct {
		Layout    float64   `json:"layout"`
		Steps     []float64 `json:"steps"`
		Frames    []float64 `json:"frames"`
		Nodes     int       `json:"nodes"`
		LayoutCPU float64   `json:"-"`
		FramesCPU float64   `json:"-"`
	}
	async := func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }
	measure := func(group string) run {
		var r run
		before := threadTime(b, tab)
		tab.run(b, chromedp.Evaluate(`(async () => {
			const ex = window.procgraphExplorer;
			ex.group = `+jsString(group)+`;
			const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
			await frame();
			const t0 = performance.now();
			await ex.load(window.__graph1k);
			const t = ex.timing;
			return { layout: performance.now() - t0, steps: [t.modelled - t.start, t.built - t.modelled, t.layout - t.built, t.laidOut - t.layout] };
		})()`, &r, async))
		mid := threadTime(b, tab)
		r.LayoutCPU = mid - before
		tab.run(b, chromedp.Evaluate(`(async () => {
			const ex = window.procgraphExplorer;
			const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
			await frame();
			const cy = ex.cy, frames = [];
			for (let i = 0; i < 40; i++) {
				const t = performance.now();
				if (i % 2) cy.panBy({ x: i % 4 === 1 ? 40 : -40, y: 15 });
				else cy.zoom({ level: cy.zoom() * (i % 4 === 0 ? 1.25 : 0.8), renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } });
				await frame();
				frames.push(performance.now() - t);
			}
			return { frames, nodes: cy.nodes().length };
		})()`, &r, async))
		r.FramesCPU = threadTime(b, tab) - mid
		return r
	}
	logRun := func(what string, r run) {
		b.Logf("%s: %d nodes; layout %.0f ms (model %.0f, cytoscape %.0f, layout %.0f, stretch and declutter %.0f), %.0f ms CPU; frames mean %.1f ms, worst %.1f ms, %.1f ms CPU each",
			what, r.Nodes, r.Layout, r.Steps[0], r.Steps[1], r.Steps[2], r.Steps[3], r.LayoutCPU*1000, mean(r.Frames), slices.Max(r.Frames), r.FramesCPU*1000/float64(len(r.Frames)))
	}
	b.ResetTimer()
	var layout, layoutCPU, frames, framesCPU, worst float64
	var n int
	for i := 0; i < b.N; i++ {
		r := measure("auto")
		layout += r.Layout
		layoutCPU += r.LayoutCPU
		framesCPU += r.FramesCPU
		for _, f := range r.Frames {
			frames += f
			worst = max(worst, f)
			n++
		}
		logRun("clusters", r)
	}
	b.StopTimer()
	b.ReportMetric(layout/float64(b.N), "ms/layout")
	b.ReportMetric(layoutCPU*1000/float64(b.N), "cpu-ms/layout")
	b.ReportMetric(frames/float64(n), "ms/frame")
	b.ReportMetric(worst, "max-ms/frame")
	b.ReportMetric(framesCPU*1000/float64(n), "cpu-ms/frame")
	tab.screenshot(b, "bench-graph-1k")
	logRun("no clusters", measure("none"))
	tab.run(b, chromedp.Evaluate(`window.procgraphExplorer.group = 'auto'; true`, nil))
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
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
// nodes and 5,000 edges without clusters: from handing it the graph to the layout done and
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
			ex.group = 'none'; // every node drawn: the clusters are BenchmarkConsoleGraph1k's
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
