package main

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// hostileCause is a cause name that tries to break out of a DOT string,
// an XML attribute and HTML.
const hostileCause = `"]; evil -> x; "</data><img src=x onerror=alert(1)>\`

// TestGraphExports: the real server's exports of the examples' graph (a
// hostile cause among them) are read by Graphviz (dot -Tsvg) and by
// networkx's GraphML reader with every node, edge and typed attribute, and
// procgraph graph --format writes the same bytes.
func TestGraphExports(t *testing.T) {
	s := mustServe(t, serverOpts{})
	names := mustCaptureExamples(t, s, hostileCause)
	var g struct {
		Nodes []struct{ ID, Kind, Label string }
		Edges []struct{ Source, Target string }
	}
	s.get(t, "/v1/graph?depth=2").Into(t, &g)
	if len(g.Nodes) < len(names)+1 || len(g.Edges) == 0 {
		t.Fatalf("graph %+v", g)
	}
	dotOut := s.get(t, "/v1/graph?depth=2&format=dot")
	if dotOut.Status != 200 || !strings.HasPrefix(dotOut.Header.Get("Content-Type"), "text/vnd.graphviz") {
		t.Fatalf("dot: %d %s", dotOut.Status, dotOut.Header.Get("Content-Type"))
	}
	gml := s.get(t, "/v1/graph?depth=2&format=graphml")
	if gml.Status != 200 || !strings.HasPrefix(gml.Header.Get("Content-Type"), "application/graphml+xml") {
		t.Fatalf("graphml: %d %s", gml.Status, gml.Header.Get("Content-Type"))
	}
	mustError(t, s.get(t, "/v1/graph?format=svg"), 400, "invalid_request")

	t.Run("cli", func(t *testing.T) {
		t.Setenv("PROCGRAPH_URL", s.URL)
		for format, want := range map[string][]byte{"dot": dotOut.Body, "graphml": gml.Body} {
			code, out, errOut := runMain(t, "graph", "--depth", "2", "--format", format)
			if code != 0 || out != string(want) {
				t.Fatalf("graph --format %s: exit %d %s\n%s", format, code, errOut, out)
			}
		}
		if code, _, errOut := runMain(t, "graph", "--format", "svg"); code == 0 || !strings.Contains(errOut, "--format") {
			t.Fatalf("graph --format svg: exit %d %s", code, errOut)
		}
	})

	t.Run("graphviz", func(t *testing.T) {
		dot := requireCommand(t, "dot", "apt-get install graphviz")
		cmd := exec.Command(dot, "-Tsvg")
		cmd.Stdin = bytes.NewReader(dotOut.Body)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		svg, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			t.Fatalf("dot -Tsvg: %v %s\n%s", err, stderr.String(), dotOut.Body)
		}
		// Graphviz draws one <g class="node"> per node and one per edge:
		// a name that broke out of its string would add or lose some.
		if n := bytes.Count(svg, []byte(`class="node"`)); n != len(g.Nodes) {
			t.Fatalf("the SVG has %d nodes, want %d\n%s", n, len(g.Nodes), dotOut.Body)
		}
		if n := bytes.Count(svg, []byte(`class="edge"`)); n != len(g.Edges) {
			t.Fatalf("the SVG has %d edges, want %d", n, len(g.Edges))
		}
		if bytes.Contains(svg, []byte("<img")) {
			t.Fatal("the hostile name reached the SVG unescaped")
		}
	})

	t.Run("networkx", func(t *testing.T) {
		py, _ := filepath.Abs(filepath.Join("testdata", "graphexport", ".venv", "bin", "python"))
		if _, err := os.Stat(py); err != nil {
			py = requireCommand(t, "python3", "apt-get install python3")
		}
		if out, err := exec.Command(py, "-c", "import networkx").CombinedOutput(); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI=true and networkx does not import (.ci/run installs it): %s", out)
			}
			t.Skipf("networkx is missing; install it with: python3 -m venv cmd/procgraph/testdata/graphexport/.venv && cmd/procgraph/testdata/graphexport/.venv/bin/pip install -r cmd/procgraph/testdata/graphexport/requirements.txt (%s)", strings.TrimSpace(string(out)))
		}
		file := filepath.Join(t.TempDir(), "g.graphml")
		if err := os.WriteFile(file, gml.Body, 0o644); err != nil {
			t.Fatal(err)
		}
		script := `import json, sys, networkx as nx
g = nx.read_graphml(sys.argv[1])
print(json.dumps({"nodes": {n: d for n, d in g.nodes(data=True)}, "edges": g.number_of_edges(), "directed": g.is_directed()}))`
		out, err := exec.Command(py, "-c", script, file).CombinedOutput()
		if err != nil {
			t.Fatalf("networkx: %v\n%s", err, out)
		}
		var got struct {
			Nodes    map[string]map[string]any
			Edges    int
			Directed bool
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if len(got.Nodes) != len(g.Nodes) || got.Edges != len(g.Edges) || !got.Directed {
			t.Fatalf("networkx read %d nodes, %d edges (directed %v); want %d, %d", len(got.Nodes), got.Edges, got.Directed, len(g.Nodes), len(g.Edges))
		}
		for _, n := range g.Nodes {
			d, ok := got.Nodes[n.ID]
			if !ok || d["label"] != n.Label || d["kind"] != n.Kind {
				t.Fatalf("node %q read as %v", n.ID, d)
			}
			if n.Kind == "procedure" {
				// Typed: frequency is a number and read_only a boolean, not text.
				if _, ok := d["frequency"].(float64); !ok {
					t.Fatalf("frequency of %s read as %T %v", n.ID, d["frequency"], d["frequency"])
				}
				if _, ok := d["read_only"].(bool); !ok {
					t.Fatalf("read_only of %s read as %T", n.ID, d["read_only"])
				}
			}
		}
		if _, ok := got.Nodes["cause:"+hostileCause]; !ok {
			t.Fatalf("the hostile cause is not a node: %v", got.Nodes)
		}
	})
}

// TestNamesWithSlashes: a cause named with "/" (escaped %2F in the path)
// is found; chi routes such a path raw and handed the name over escaped.
func TestNamesWithSlashes(t *testing.T) {
	t.Parallel()
	s := mustServe(t, serverOpts{})
	const cause = "a/b <c>"
	mustCaptureExamples(t, s, cause)
	var c struct{ Name string }
	mustStatus(t, s.get(t, "/v1/causes/"+url.PathEscape(cause)), 200)
	s.get(t, "/v1/causes/"+url.PathEscape(cause)).Into(t, &c)
	if c.Name != cause {
		t.Fatalf("cause %q", c.Name)
	}
}
