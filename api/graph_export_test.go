package api

import (
	"bytes"
	"encoding/xml"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/graph/formats/dot"
	"gonum.org/v1/gonum/graph/formats/dot/ast"

	"github.com/procgraph/procgraph/graphview"
	"github.com/procgraph/procgraph/internal/golden"
	"github.com/procgraph/procgraph/procedures"
)

// exampleGraph is a small graph with every kind of node and edge.
func exampleGraph() *graphview.Graph {
	return &graphview.Graph{
		Nodes: []graphview.GraphNode{
			{ID: "cause:input dataset unavailable", Kind: "cause", Label: "input dataset unavailable", Properties: map[string]any{}},
			{ID: "procedure:proc__a__b", Kind: "procedure", Label: "proc__a__b", Properties: map[string]any{
				"frequency": int64(3), "use_count": int64(5), "status": procedures.Status("succeeded"),
				"signature": []string{"a", "b"}, "read_only": true, "class": graphview.ClassReadOnly}},
			{ID: "tool:a", Kind: "tool", Label: "a", Properties: map[string]any{"class": graphview.ClassReadOnly}},
			{ID: "tool:b", Kind: "tool", Label: "b", Properties: map[string]any{"class": graphview.ClassUnknown}},
		},
		Edges: []graphview.GraphEdge{
			{Source: "cause:input dataset unavailable", Target: "procedure:proc__a__b", Kind: "INVESTIGATED_BY", Frequency: 2},
			{Source: "procedure:proc__a__b", Target: "tool:a", Kind: "CALLS"},
			{Source: "procedure:proc__a__b", Target: "tool:b", Kind: "CALLS"},
		},
	}
}

// hostileNames are names an attacker with only the capture scope can give a
// cause (and so a node).
var hostileNames = []string{
	`"]; evil -> x; "`,
	`a\`,
	`\"`,
	"line\nbreak\r\tand\x00nul",
	`<img src=x onerror=alert(1)>`,
	`</data></node><node id="injected"/>`,
	`]]><!--`,
	`&amp; &lt; "' \N \G \L`,
	"bad utf-8 \xff\xfe",
	"}\ndigraph x {",
	`javascript:alert(1)`,
}

func hostileGraph() *graphview.Graph {
	g := &graphview.Graph{}
	for i, name := range hostileNames {
		g.Nodes = append(g.Nodes, graphview.GraphNode{ID: "cause:" + name, Kind: "cause", Label: name,
			Properties: map[string]any{"description": name, "class": name}})
		if i > 0 {
			g.Edges = append(g.Edges, graphview.GraphEdge{Source: "cause:" + hostileNames[i-1], Target: "cause:" + name, Kind: name, Frequency: int64(i)})
		}
	}
	return g
}

// TestGraphExportGolden: the exports of a fixed graph are byte for byte the
// reviewed files in testdata/export (go test ./api -run Golden -update
// rewrites them).
func TestGraphExportGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  []byte
	}{
		{"graph.graphml", GraphML(exampleGraph())},
		{"graph.dot", DOT(exampleGraph())},
		{"hostile.graphml", GraphML(hostileGraph())},
		{"hostile.dot", DOT(hostileGraph())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			golden.Match(t, filepath.Join("testdata", "export", tc.name), tc.got)
		})
	}
}

// graphML is the part of GraphML the tests read back.
type graphML struct {
	Keys []struct {
		ID   string `xml:"id,attr"`
		For  string `xml:"for,attr"`
		Name string `xml:"attr.name,attr"`
		Type string `xml:"attr.type,attr"`
	} `xml:"key"`
	Graph struct {
		Nodes []struct {
			ID   string `xml:"id,attr"`
			Data []struct {
				Key  string `xml:"key,attr"`
				Text string `xml:",chardata"`
			} `xml:"data"`
		} `xml:"node"`
		Edges []struct {
			Source string `xml:"source,attr"`
			Target string `xml:"target,attr"`
		} `xml:"edge"`
	} `xml:"graph"`
}

// xmlClean is what XML can carry of s: what GraphML promises to keep.
func xmlClean(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(strings.ToValidUTF8(s, "\uFFFD")))
	var out string
	_ = xml.Unmarshal([]byte("<a>"+b.String()+"</a>"), &struct {
		XMLName xml.Name `xml:"a"`
		Text    *string  `xml:",chardata"`
	}{Text: &out})
	return out
}

// TestGraphMLHostileNames: every hostile name comes back from an XML parser
// as the same node's label and ID; no element is added.
func TestGraphMLHostileNames(t *testing.T) {
	g := hostileGraph()
	var doc graphML
	if err := xml.Unmarshal(GraphML(g), &doc); err != nil {
		t.Fatalf("GraphML does not parse: %v", err)
	}
	if len(doc.Graph.Nodes) != len(g.Nodes) || len(doc.Graph.Edges) != len(g.Edges) {
		t.Fatalf("%d nodes, %d edges; want %d, %d", len(doc.Graph.Nodes), len(doc.Graph.Edges), len(g.Nodes), len(g.Edges))
	}
	for i, n := range doc.Graph.Nodes {
		want := g.Nodes[i]
		if n.ID != xmlClean(want.ID) {
			t.Errorf("node %d id %q, want %q", i, n.ID, xmlClean(want.ID))
		}
		var label string
		for _, d := range n.Data {
			if d.Key == "n_label" {
				label = d.Text
			}
		}
		if label != xmlClean(want.Label) {
			t.Errorf("node %d label %q, want %q", i, label, xmlClean(want.Label))
		}
	}
	types := map[string]string{}
	for _, k := range doc.Keys {
		types[k.For+"/"+k.Name] = k.Type
	}
	var typed graphML
	if err := xml.Unmarshal(GraphML(exampleGraph()), &typed); err != nil {
		t.Fatal(err)
	}
	for _, k := range typed.Keys {
		types[k.For+"/"+k.Name] = k.Type
	}
	for key, want := range map[string]string{"node/frequency": "long", "node/read_only": "boolean", "node/label": "string", "edge/frequency": "long", "node/signature": "string"} {
		if types[key] != want {
			t.Errorf("%s typed %q, want %q", key, types[key], want)
		}
	}
}

// TestDOTHostileNames: a DOT parser (gonum's) reads exactly the nodes and
// edges of the hostile graph, each hostile name inside its own quoted ID.
func TestDOTHostileNames(t *testing.T) {
	g := hostileGraph()
	file, err := dot.ParseBytes(DOT(g))
	if err != nil {
		t.Fatalf("DOT does not parse: %v\n%s", err, DOT(g))
	}
	if len(file.Graphs) != 1 {
		t.Fatalf("%d graphs", len(file.Graphs))
	}
	var nodes, edges int
	for _, st := range file.Graphs[0].Stmts {
		switch st := st.(type) {
		case *ast.NodeStmt:
			if want := dotQuote(g.Nodes[nodes].ID); st.Node.ID != want {
				t.Errorf("node %d id %s, want %s", nodes, st.Node.ID, want)
			}
			nodes++
		case *ast.EdgeStmt:
			edges++
		}
	}
	if nodes != len(g.Nodes) || edges != len(g.Edges) {
		t.Fatalf("%d nodes, %d edges; want %d, %d", nodes, edges, len(g.Nodes), len(g.Edges))
	}
}

// FuzzDOTQuote: any name quoted by dotQuote is one DOT ID: a node statement
// with it parses as exactly one node.
func FuzzDOTQuote(f *testing.F) {
	for _, s := range hostileNames {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		src := "digraph g { " + dotQuote(s) + " [label=" + dotQuote(s) + "]; }"
		file, err := dot.ParseString(src)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if n := len(file.Graphs[0].Stmts); n != 1 {
			t.Fatalf("%q: %d statements", src, n)
		}
	})
}
