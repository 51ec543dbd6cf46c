package neo4j

import (
	"context"
	"testing"

	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
)

// TestToolCountsBackfill: a database without the per-tool class counts
// (written before they were kept: no ToolClass or ToolClassShard node, no
// tools_key), where one procedure's tools are still counted under a class
// it left (as a version that did not keep them would leave it, on
// ToolClass nodes: before the shards), gives exact
// tool-filtered totals once a store is opened on it again: backfillTools
// counts every procedure, in batches, and moves the stale one.
func TestToolCountsBackfill(t *testing.T) {
	ctx := context.Background()
	s := freshStore(t)
	svc := procedures.NewService(s, procedures.Options{})
	if _, err := svc.PutCatalogue(ctx, storetest.ToolTotalsCatalogue(false), "test"); err != nil {
		t.Fatal(err)
	}
	storetest.CaptureToolTotals(t, s, 0)
	storetest.RequireToolTotals(t, s, "as written")
	readOnly := true
	q := procedures.Query{Limit: 1, Tools: []string{"tool_a"}, ReadOnly: &readOnly}
	_, want, err := s.Find(ctx, q)
	if err != nil || want == 0 {
		t.Fatalf("Find(tool_a, read-only) = total %d, %v: no test", want, err)
	}

	run(t, s, "MATCH (k) WHERE k:ToolClass OR k:ToolClassShard DETACH DELETE k", nil)
	run(t, s, "MATCH (p:Procedure) REMOVE p.tools_key", nil)
	stale := storetest.NameOf("tool_a", "tool_b")
	recs := run(t, s, `MATCH (p:Procedure {name: $name}) SET p.tools_key = 'gone'
		WITH p UNWIND p.signature AS tool CREATE (:ToolClass {tool: tool, key: 'gone', count: 1})
		RETURN count(*) AS n`, map[string]any{"name": stale})
	if n, _ := field(recs[0], "n").(int64); n != 2 {
		t.Fatalf("stale counts for %d tools of %s, want 2", n, stale)
	}
	if _, got, err := s.Find(ctx, q); err != nil || got == want {
		t.Fatalf("without the counts Find(tool_a, read-only) = total %d, %v: the counts are not what it reads", got, err)
	}

	defer func(b int) { toolsBatch = b }(toolsBatch)
	toolsBatch = 7
	again := openStore(t)
	storetest.RequireToolTotals(t, again, "after opening again")
	recs = run(t, again, `MATCH (p:Procedure) WHERE p.tools_key IS NULL OR p.tools_key <> p.class_key RETURN count(p) AS n`, nil)
	if n, _ := field(recs[0], "n").(int64); n != 0 {
		t.Errorf("%d procedures with tools not counted in their class", n)
	}
	recs = run(t, again, `MATCH (k) WHERE (k:ToolClass OR k:ToolClassShard) AND k.key = 'gone' RETURN sum(k.count) AS n`, nil)
	if n, _ := field(recs[0], "n").(int64); n != 0 {
		t.Errorf("%d still counted under the class %s left", n, stale)
	}
}
