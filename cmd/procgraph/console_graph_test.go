package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	ptext "github.com/procgraph/procgraph/internal/text"
)

// graphWords name the made-up tools of realisticGraph: every tool shares
// the prefix "panda_" (as a real catalogue's tools often share one), so
// that labels must drop it to tell procedures apart.
var graphWords = []string{"task", "job", "log", "site", "queue", "file", "dataset", "pilot", "brokerage", "transfer", "scout", "retry"}

// realisticGraph is a GET /v1/graph answer with procs procedures named as
// captures name them (proc__ and their tools), each investigated for one of
// causes causes and calling two of tools tools: procs*3 edges.
func realisticGraph(procs, causes, tools int) map[string]any {
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
	rng := rand.New(rand.NewPCG(7, 11))
	var ns []node
	var es []edge
	toolName := make([]string, tools)
	for i := range toolName {
		verb := []string{"get", "fetch", "list", "kill", "retry"}[i%5]
		toolName[i] = fmt.Sprintf("panda_%s_%s_%s_%d", verb, graphWords[i%len(graphWords)], graphWords[(i/len(graphWords))%len(graphWords)], i)
		class := "read_only"
		if verb == "kill" || verb == "retry" {
			class = "state_changing"
		}
		ns = append(ns, node{"tool:" + toolName[i], "tool", toolName[i], map[string]any{"class": class}})
	}
	for c := 0; c < causes; c++ {
		name := fmt.Sprintf("%s %s unavailable %d", graphWords[c%len(graphWords)], graphWords[(c*5+3)%len(graphWords)], c)
		if c == 0 {
			name = "hostile\u001b[2K\rcause" // an agent names causes: the label shows escapes
		}
		ns = append(ns, node{"cause:" + name, "cause", name, map[string]any{}})
	}
	seen := map[string]bool{}
	for p := 0; len(seen) < procs; p++ {
		a, b := rng.IntN(tools), rng.IntN(tools)
		if a == b {
			continue
		}
		if a > b {
			a, b = b, a
		}
		name := "proc__" + toolName[a] + "__" + toolName[b]
		if seen[name] {
			continue
		}
		seen[name] = true
		id := "procedure:" + name
		ns = append(ns, node{id, "procedure", name, map[string]any{"frequency": 1 + rng.IntN(20), "class": classes[p%3],
			"signature": []string{toolName[a], toolName[b]}}})
		cause := ns[tools+rng.IntN(causes)].ID
		es = append(es, edge{cause, id, "INVESTIGATED_BY", 1 + rng.IntN(9)},
			edge{id, "tool:" + toolName[a], "CALLS", 0}, edge{id, "tool:" + toolName[b], "CALLS", 0})
	}
	return map[string]any{"nodes": ns, "edges": es, "truncated": false}
}

// graphLabelsJS is every shown, labelled node of the explorer with its
// box (node and label, cytoscape's model: boundingBox includeLabels), and
// the pairs whose boxes overlap.
const graphLabelsJS = `(() => {
	const cy = window.procgraphExplorer.cy;
	const shown = cy.nodes().filter((n) => n.visible() && n.style('opacity') > 0.5 && n.style('label') !== '');
	const boxes = shown.map((n) => ({ id: n.id(), label: n.style('label'), kind: n.data('kind'), b: n.boundingBox({ includeLabels: true }) }));
	const overlaps = [];
	for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
		const a = boxes[i].b, b = boxes[j].b;
		if (a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2) overlaps.push(boxes[i].label + ' / ' + boxes[j].label);
	}
	const r = cy.elements().renderedBoundingBox();
	return { labels: boxes.map((x) => x.label), kinds: boxes.map((x) => x.kind), overlaps, nodes: cy.nodes().length,
		width: (Math.min(r.x2, cy.width()) - Math.max(r.x1, 0)) / cy.width(), height: (Math.min(r.y2, cy.height()) - Math.max(r.y1, 0)) / cy.height() };
})()`

type graphLabels struct {
	Labels   []string `json:"labels"`
	Kinds    []string `json:"kinds"`
	Overlaps []string `json:"overlaps"`
	Nodes    int      `json:"nodes"`
	Width    float64  `json:"width"`
	Height   float64  `json:"height"`
}

// mustReadableGraph fails when labels overlap, when fewer than min nodes
// are labelled, when a label shows the proc__ prefix or the tools' shared
// one, or when the drawing leaves most of the canvas empty.
func mustReadableGraph(t *testing.T, tab *browserTab, where string, least int) graphLabels {
	t.Helper()
	var g graphLabels
	tab.eval(t, graphLabelsJS, &g)
	if len(g.Overlaps) > 0 {
		t.Errorf("%s: %d overlapping labels, e.g. %q", where, len(g.Overlaps), g.Overlaps[:min(len(g.Overlaps), 5)])
	}
	if len(g.Labels) < least {
		t.Errorf("%s: only %d labelled nodes of %d: %q", where, len(g.Labels), g.Nodes, g.Labels)
	}
	for _, l := range g.Labels {
		if strings.Contains(l, "proc__") || strings.Contains(l, "panda_") {
			t.Errorf("%s: label %q shows a shared prefix", where, l)
		}
	}
	if g.Width < 0.8 || g.Height < 0.6 {
		t.Errorf("%s: the drawing spans %.0f%% × %.0f%% of the canvas", where, g.Width*100, g.Height*100)
	}
	return g
}

// TestConsoleGraph1k: the explorer with 1,000 procedures and 3,000 edges
// (a realistic graph handed to the page: the server's neighbourhoods are
// capped at 500 nodes) opens in clusters by cause whose labels, read from
// cytoscape's model, do not overlap and fill the canvas; a tap expands a
// cluster into procedures labelled by their tools; focus fades the rest;
// search finds a procedure inside a collapsed cluster and focuses it;
// clusters by tool read as well.
func TestConsoleGraph1k(t *testing.T) {
	t.Parallel()
	tab := mustBrowser(t)
	s := mustServe(t, serverOpts{})
	mustCaptureExamples(t, s, "input dataset unavailable")
	g := realisticGraph(1000, 60, 150)
	raw, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	var counted struct{ Nodes, Edges []json.RawMessage }
	if err := json.Unmarshal(raw, &counted); err != nil || len(counted.Edges) != 3000 || len(counted.Nodes) != 1210 {
		t.Fatalf("the fixture has %d nodes and %d edges (%v)", len(counted.Nodes), len(counted.Edges), err)
	}
	tab.open(t, s.URL, "#/graph")
	tab.waitJS(t, `window.procgraphExplorer.ready`)
	tab.run(t, chromedp.Evaluate(`window.procgraphExplorer.load(`+string(raw)+`); true`, nil))
	tab.waitJS(t, `window.procgraphExplorer.ready`)

	t.Run("default view: clusters by cause, no overlapping labels", func(t *testing.T) {
		var by string
		tab.eval(t, `window.procgraphExplorer.by`, &by)
		if by != "cause" {
			t.Fatalf("grouped by %q", by)
		}
		gl := mustReadableGraph(t, tab, "default view", 24) // labels of at least 11 px: fewer fit without overlapping, and the force layout varies
		if gl.Nodes != 60 {
			t.Fatalf("%d nodes in the default view, want the 60 cause clusters", gl.Nodes)
		}
		var shown []string
		tab.eval(t, `window.procgraphExplorer.cy.nodes().map((n) => n.data('shown'))`, &shown)
		found := false
		for _, l := range shown {
			if strings.IndexFunc(l, ptext.Hidden) >= 0 {
				t.Errorf("a cluster label holds a hidden character: %q", l)
			}
			found = found || strings.HasPrefix(l, `hostile\u001b[2K\u000dcause (`)
		}
		if !found {
			t.Errorf("no cluster labels the hostile cause visibly: %q", shown)
		}
		var shot []byte
		tab.run(t, chromedp.Screenshot("#cy", &shot, chromedp.ByQuery))
		if ink := inkedPixels(t, shot); ink < 5000 {
			t.Fatalf("the graph canvas is nearly blank (%d inked pixels)", ink)
		}
		tab.screenshot(t, "graph-1k")
		tab.mustClean(t, "graph 1k")
	})

	t.Run("a tap expands a cluster into procedures labelled by their tools", func(t *testing.T) {
		var id string
		tab.eval(t, `window.procgraphExplorer.cy.nodes('[kind = "cluster"]').max((n) => n.data('count')).ele.id()`, &id)
		tab.run(t, chromedp.Evaluate(`window.procgraphExplorer.cy.getElementById(`+jsString(id)+`).emit('tap'); true`, nil))
		tab.waitJS(t, `window.procgraphExplorer.ready && window.procgraphExplorer.expandedClusters.size === 1 && window.procgraphExplorer.focus === `+jsString(id))
		var st struct {
			Procs, Faded, Near int
			Labels             []string
		}
		tab.eval(t, `(() => { const cy = window.procgraphExplorer.cy; return { procs: cy.nodes('[kind = "procedure"]').length,
			faded: cy.nodes('.faded').length, near: cy.nodes('.near').length,
			labels: cy.nodes('[kind = "procedure"]').map((n) => n.data('shown')) }; })()`, &st)
		if st.Procs == 0 || st.Faded == 0 || st.Near <= st.Procs {
			t.Fatalf("after expanding: %+v", st)
		}
		for _, l := range st.Labels {
			if !strings.Contains(l, " · ") || strings.Contains(l, "panda_") {
				t.Fatalf("a procedure labelled %q, want its tools without their shared prefix", l)
			}
		}
		mustReadableGraph(t, tab, "expanded and focused", 5)
		if got := tab.text(t, "#g-details"); !strings.Contains(got, "procedures, by cause") {
			t.Fatalf("the side panel: %q", got)
		}
		tab.screenshot(t, "graph-1k-expanded")
		tab.run(t, chromedp.Evaluate(`window.procgraphExplorer.cy.getElementById(`+jsString(id)+`).emit('tap'); true`, nil))
		tab.waitJS(t, `window.procgraphExplorer.ready && window.procgraphExplorer.expandedClusters.size === 0`)
		tab.run(t, chromedp.Click("#g-unfocus", chromedp.ByQuery))
		mustReadableGraph(t, tab, "collapsed again", 30)
	})

	t.Run("search focuses a procedure inside a collapsed cluster", func(t *testing.T) {
		// The 500th procedure of the fixture, found by a tool of its label.
		var target struct{ ID, Tool string }
		tab.eval(t, `(() => { const n = [...window.procgraphExplorer.model.nodes.values()].filter((n) => n.kind === 'procedure')[500];
			return { id: n.id, tool: n.label.replace(/^proc__/, '') }; })()`, &target)
		tab.run(t, chromedp.SetValue("#g-find", target.Tool, chromedp.ByQuery), chromedp.Click("#g-find-go", chromedp.ByQuery))
		tab.waitJS(t, `window.procgraphExplorer.ready && window.procgraphExplorer.found === `+jsString(target.ID))
		var st struct {
			Selected, Faded bool
			InView          bool
		}
		tab.eval(t, `(() => { const cy = window.procgraphExplorer.cy, n = cy.getElementById(`+jsString(target.ID)+`), p = n.renderedPosition();
			return { selected: n.selected(), faded: n.hasClass('faded'), inView: p.x > 0 && p.y > 0 && p.x < cy.width() && p.y < cy.height() }; })()`, &st)
		if !st.Selected || st.Faded || !st.InView {
			t.Fatalf("the found procedure: %+v", st)
		}
		if got := tab.text(t, "#notice"); !strings.Contains(got, "Focused") {
			t.Fatalf("no confirmation of the focus: %q", got)
		}
		mustReadableGraph(t, tab, "search focus", 3)
		tab.screenshot(t, "graph-1k-found")
		tab.run(t, chromedp.SetValue("#g-find", "no such procedure", chromedp.ByQuery), chromedp.Click("#g-find-go", chromedp.ByQuery))
		tab.waitJS(t, `document.getElementById('g-not-found') !== null`)
		tab.mustClean(t, "graph search")
	})

	t.Run("clusters by tool", func(t *testing.T) {
		tab.run(t, chromedp.SetValue("#g-group", "tool", chromedp.ByQuery),
			chromedp.Evaluate(`document.getElementById('g-group').dispatchEvent(new Event('change')); true`, nil))
		tab.waitJS(t, `window.procgraphExplorer.ready && window.procgraphExplorer.by === 'tool'`)
		gl := mustReadableGraph(t, tab, "clusters by tool", 30)
		if gl.Nodes != 150 {
			t.Fatalf("%d nodes, want the 150 tool clusters", gl.Nodes)
		}
		tab.screenshot(t, "graph-1k-tools")
		tab.mustClean(t, "graph by tool")
	})
}
