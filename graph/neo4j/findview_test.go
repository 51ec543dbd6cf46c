package neo4j

import (
	"context"
	"testing"

	"github.com/procgraph/procgraph/procedures"
)

// TestFindWithCatalogueSeesOtherInstances: the catalogue that comes with a
// Find page (FindWithCatalogue) is the one another instance (a second
// store and driver on the same Neo4j) has just put, on each of its paths:
// find_all, find_classes (summary filters) and a tool filter read beside.
func TestFindWithCatalogueSeesOtherInstances(t *testing.T) {
	ctx := context.Background()
	writer := procedures.NewService(freshStore(t), procedures.Options{})
	if _, err := writer.Capture(ctx, procedures.CaptureRequest{Code: "return tools.get_jobs(task_id=task_id)\n"}); err != nil {
		t.Fatal(err)
	}
	yes := true
	queries := map[string]procedures.Query{ // each read by its own store: each path meets the other instance's change first
		"find_all":     {Limit: 25},
		"find_classes": {Limit: 25, Exposed: &yes, SkipTotal: true},
		"beside":       {Limit: 25, Tools: []string{"get_jobs"}},
		"search":       {Limit: 25, Search: []string{"jobs"}},
	}
	readers := map[string]*Store{}
	for name := range queries {
		readers[name] = openStore(t)
	}
	for i, tools := range [][]procedures.Tool{
		{{Name: "get_jobs", ReadOnly: true}},
		{{Name: "get_jobs", ReadOnly: true}, {Name: "get_logs", ReadOnly: true}},
		{{Name: "get_jobs"}},
	} {
		c, err := writer.PutCatalogue(ctx, tools, "t")
		if err != nil {
			t.Fatal(err)
		}
		for name, q := range queries {
			for read := range 2 { // the second read holds the catalogue already
				ps, _, cat, err := readers[name].FindWithCatalogue(ctx, q)
				if err != nil {
					t.Fatalf("catalogue %d, %s: %v", i, name, err)
				}
				if cat == nil || cat.Revision != c.Revision || len(cat.Tools) != len(tools) {
					t.Fatalf("catalogue %d, %s, read %d: got %+v, want revision %s", i, name, read, cat, c.Revision)
				}
				if name != "find_classes" && len(ps) != 1 {
					t.Fatalf("catalogue %d, %s: %d procedures", i, name, len(ps))
				}
			}
		}
	}
}
