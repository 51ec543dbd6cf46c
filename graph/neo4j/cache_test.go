package neo4j

import (
	"context"
	"testing"

	"github.com/procgraph/procgraph/procedures"
)

// TestCachesSeeOtherInstances: the catalogue a store keeps by revision and
// the classes Find keeps (findOne) never hide a change made through another
// instance (a second store and driver on the same Neo4j): a catalogue put
// there is the next Catalogue here, and a procedure of a class this store
// has not read is in the next Find's page and total.
func TestCachesSeeOtherInstances(t *testing.T) {
	ctx := context.Background()
	writer := procedures.NewService(freshStore(t), procedures.Options{})
	reader := openStore(t)
	put := func(tools ...procedures.Tool) string {
		t.Helper()
		c, err := writer.PutCatalogue(ctx, tools, "t")
		if err != nil {
			t.Fatal(err)
		}
		return c.Revision
	}
	jobs, logs := procedures.Tool{Name: "get_jobs", ReadOnly: true}, procedures.Tool{Name: "get_logs", ReadOnly: true}
	first := put(jobs, logs)
	if c, err := reader.Catalogue(ctx); err != nil || c.Revision != first || !c.Has("get_logs") {
		t.Fatalf("catalogue %+v, %v; want revision %s", c, err, first)
	}
	second := put(jobs, logs, procedures.Tool{Name: "kill_job"})
	for range 2 { // the second read answers from the kept catalogue
		c, err := reader.Catalogue(ctx)
		if err != nil || c.Revision != second || !c.Has("kill_job") {
			t.Fatalf("catalogue %+v, %v; want revision %s with kill_job", c, err, second)
		}
	}

	find := func(readOnly bool, want int) { t.Helper(); requireFound(t, reader, readOnly, want) }
	capture := func(code string) {
		t.Helper()
		if _, err := writer.Capture(ctx, procedures.CaptureRequest{Code: code}); err != nil {
			t.Fatal(err)
		}
	}
	find(true, 0) // no class yet
	capture("return tools.get_jobs(task_id=task_id)\n")
	find(true, 1)
	find(false, 0)
	capture("a = tools.get_jobs(task_id=task_id)\nreturn tools.get_logs(jobs=a)\n") // two tools: a class not read yet
	find(true, 2)
	capture("return tools.kill_job(task_id=task_id)\n")
	find(false, 1)
	find(true, 2)
}
