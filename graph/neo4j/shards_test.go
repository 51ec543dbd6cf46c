package neo4j

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
)

// TestCatalogueLockStripes: the catalogue's writers take the Catalogue node
// and every stripe of its lock, a new procedure classified from the held
// catalogue its own stripe alone, and a new one whose signature names a
// procedure (classified in the transaction) the whole lock again.
func TestCatalogueLockStripes(t *testing.T) {
	ctx := context.Background()
	s := freshStore(t)
	if err := s.PutCatalogue(ctx, procedures.StoredCatalogue([]procedures.Tool{{Name: "tool_a", ReadOnly: true}}, "r1")); err != nil {
		t.Fatal(err)
	}
	stripes := func(at any) []int64 {
		t.Helper()
		recs := run(t, s, `MATCH (s:CatalogueStripe) WHERE s.locked_at = $at RETURN s.id AS id ORDER BY id`, map[string]any{"at": at})
		var ids []int64
		for _, r := range recs {
			id, _ := field(r, "id").(int64)
			ids = append(ids, id)
		}
		return ids
	}
	catalogueLocked := func(at any) bool {
		recs := run(t, s, `MATCH (c:Catalogue {id: 'current'}) RETURN c.locked_at = $at AS locked`, map[string]any{"at": at})
		return len(recs) == 1 && field(recs[0], "locked") == true
	}
	recs := run(t, s, `MATCH (c:Catalogue {id: 'current'}) RETURN c.locked_at AS at`, nil)
	put := field(recs[0], "at")
	if got := stripes(put); len(got) != catalogueStripes {
		t.Errorf("PutCatalogue took stripes %v, want all %d", got, catalogueStripes)
	}

	fast := storetest.In([]string{"tool_a"}, "h", "k", storetest.At(1))
	storetest.MustCapture(t, s, fast)
	if got, want := stripes(dbTime(fast.At)), []int64{int64(catalogueStripe(fast.Name))}; !slices.Equal(got, want) {
		t.Errorf("a new procedure of catalogue tools took stripes %v, want its own %v", got, want)
	}
	if catalogueLocked(dbTime(fast.At)) {
		t.Error("a new procedure of catalogue tools took the Catalogue node")
	}

	nested := storetest.In([]string{fast.Name, "tool_a"}, "h", "k", storetest.At(2))
	storetest.MustCapture(t, s, nested)
	if got := stripes(dbTime(nested.At)); len(got) != catalogueStripes {
		t.Errorf("a new procedure calling a procedure took stripes %v, want all %d", got, catalogueStripes)
	}
	if !catalogueLocked(dbTime(nested.At)) {
		t.Error("a new procedure calling a procedure did not take the Catalogue node")
	}

	storetest.MustCapture(t, s, storetest.In([]string{"tool_a"}, "h2", "k2", storetest.At(3)))
	if got := stripes(dbTime(storetest.At(3))); len(got) != 0 {
		t.Errorf("a capture of an existing procedure took stripes %v", got)
	}
}

// TestNewProceduresSpreadOverShards: new procedures of one class, calling
// one tool, are counted in the shard of their catalogue stripe, so over
// several shards, and the totals are their sums.
func TestNewProceduresSpreadOverShards(t *testing.T) {
	s := freshStore(t)
	const n = 24
	for i := range n {
		in := storetest.In([]string{fmt.Sprintf("tool_%d", i), "tool_z"}, "h", "k", storetest.At(i))
		storetest.MustCapture(t, s, in)
		recs := run(t, s, `MATCH (p:Procedure {name: $name}) RETURN p.shard AS shard`, map[string]any{"name": in.Name})
		if got, _ := field(recs[0], "shard").(int64); got != int64(catalogueStripe(in.Name)) {
			t.Errorf("%s counted in shard %d, want its stripe %d", in.Name, got, catalogueStripe(in.Name))
		}
	}
	recs := run(t, s, `MATCH (k:ClassShard) RETURN count(k) AS shards, sum(k.count) AS n`, nil)
	if shards, _ := field(recs[0], "shards").(int64); shards < 2 {
		t.Errorf("%d procedures of one class counted in %d shard(s)", n, shards)
	}
	recs = run(t, s, `MATCH (k:ToolClassShard {tool: 'tool_z'}) RETURN count(k) AS shards`, nil)
	if shards, _ := field(recs[0], "shards").(int64); shards < 2 {
		t.Errorf("%d procedures calling tool_z counted in %d shard(s) of it", n, shards)
	}
	// Totals from the class counts alone (a page of one: not counted from
	// the page).
	total := 0
	for _, ro := range []bool{false, true} {
		_, n := storetest.MustFind(t, s, procedures.Query{Limit: 1, ReadOnly: &ro})
		total += n
	}
	if total != n {
		t.Errorf("Find by read_only totals %d, want %d", total, n)
	}
	storetest.RequireToolTotals(t, s, "over shards")
}

// TestClassCountsBeforeShards: a database whose counts are kept as a
// version before the shards kept them (on the ProcedureClass and ToolClass
// nodes, no p.shard) gives exact totals, and still does once procedures
// are captured again (new versions move some to other classes).
func TestClassCountsBeforeShards(t *testing.T) {
	ctx := context.Background()
	s := freshStore(t)
	svc := procedures.NewService(s, procedures.Options{})
	if _, err := svc.PutCatalogue(ctx, storetest.ToolTotalsCatalogue(false), "test"); err != nil {
		t.Fatal(err)
	}
	storetest.CaptureToolTotals(t, s, 0)
	// The shards folded into the nodes a version before them counted on.
	run(t, s, `MATCH (k:ProcedureClass)
		SET k.count = reduce(n = k.count, c IN COLLECT { MATCH (x:ClassShard {key: k.key}) RETURN x.count } | n + c)`, nil)
	run(t, s, `MATCH (x:ToolClassShard) WITH x.tool AS tool, x.key AS key, sum(x.count) AS n
		MERGE (k:ToolClass {tool: tool, key: key}) ON CREATE SET k.count = 0 SET k.count = k.count + n`, nil)
	run(t, s, `MATCH (x) WHERE x:ClassShard OR x:ToolClassShard DETACH DELETE x`, nil)
	run(t, s, `MATCH (p:Procedure) REMOVE p.shard`, nil)
	recs := run(t, s, `MATCH (k:ProcedureClass) WHERE k.count > 0 RETURN count(k) AS n`, nil)
	if n, _ := field(recs[0], "n").(int64); n == 0 {
		t.Fatal("no class counted on its node: no test")
	}

	again := openStore(t)
	storetest.RequireToolTotals(t, again, "counted before the shards")
	storetest.CaptureToolTotals(t, again, 1)
	storetest.RequireToolTotals(t, again, "captured again")
}
