package neo4j

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/cypher"
	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
)

// wantRank is the rank fragments/rank_set.cypher documents, computed in Go.
func wantRank(freq int64, lastUsed *time.Time, name string) string {
	lu := "2"
	if lastUsed != nil {
		if ms := lastUsed.UnixMilli(); ms >= 0 {
			lu = fmt.Sprintf("0%019d", math.MaxInt64-ms)
		} else {
			lu = fmt.Sprintf("1%019d", -1-ms)
		}
	}
	return fmt.Sprintf("%019d|%s|%s", math.MaxInt64-freq, lu, name)
}

// requireRanks checks that every procedure's stored rank is wantRank of its
// stored frequency, last_used_at and name, and returns the names in rank
// order.
func requireRanks(t *testing.T, s *Store) []string {
	t.Helper()
	recs := run(t, s, "MATCH (p:Procedure) RETURN p.name AS name, p.frequency AS frequency, p.last_used_at AS lastUsed, p.rank AS rank ORDER BY p.name", nil)
	type ranked struct{ name, rank string }
	var rs []ranked
	for _, rec := range recs {
		name, _ := field(rec, "name").(string)
		freq, _ := field(rec, "frequency").(int64)
		var lu *time.Time
		if t, ok := field(rec, "lastUsed").(time.Time); ok {
			lu = &t
		}
		got, _ := field(rec, "rank").(string)
		if want := wantRank(freq, lu, name); got != want {
			t.Errorf("%s: rank %q, want %q", name, got, want)
		}
		rs = append(rs, ranked{name, got})
	}
	slices.SortFunc(rs, func(a, b ranked) int { return strings.Compare(a.rank, b.rank) })
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.name
	}
	return names
}

// TestRank checks that capture, use and replay keep every procedure's rank
// (the key Find without filters walks) in step with its frequency and
// last_used_at, that Find's order is rank order, and that Open backfills
// the ranks of a database from before rank.
func TestRank(t *testing.T) {
	s := freshStore(t)
	ctx := context.Background()
	sigs := [][]string{{"a", "b"}, {"b", "c"}, {"c", "d"}, {"d", "e"}, {"e", "f"}, {"f", "g"}}
	for i, sig := range sigs {
		storetest.MustCapture(t, s, storetest.In(sig, "h1", "k0", storetest.At(i)))
	}
	name := func(i int) string { return storetest.NameOf(sigs[i]...) }
	// Frequency 2 for 0 and 1; replays order 1 before 0, 2 before 3.
	storetest.MustCapture(t, s, storetest.In(sigs[0], "h1", "k1", storetest.At(10)))
	storetest.MustRecordUse(t, s, procedures.UseInput{Name: name(1), UsageKey: "k1", At: storetest.At(11)})
	storetest.MustRecordUse(t, s, procedures.UseInput{Name: name(0), UsageKey: "k0", Replay: true, At: storetest.At(12)})
	storetest.MustRecordUse(t, s, procedures.UseInput{Name: name(1), UsageKey: "k0", Replay: true, At: storetest.At(13)})
	storetest.MustRecordUse(t, s, procedures.UseInput{Name: name(2), UsageKey: "k0", Replay: true, At: storetest.At(14)})
	storetest.MustRecordUse(t, s, procedures.UseInput{Name: name(3), UsageKey: "k0", Replay: true, At: storetest.At(-1)})
	// Before 1970 (negative epoch millis) and at the epoch: still before
	// the never used.
	storetest.MustRecordUse(t, s, procedures.UseInput{Name: name(4), UsageKey: "k0", Replay: true, At: time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC)})
	storetest.MustRecordUse(t, s, procedures.UseInput{Name: name(5), UsageKey: "k0", Replay: true, At: time.UnixMilli(0)})

	want := []string{name(1), name(0), name(2), name(3), name(5), name(4)}
	requireOrder := func(what string) {
		t.Helper()
		if got := requireRanks(t, s); !slices.Equal(got, want) {
			t.Fatalf("%s: rank order %v, want %v", what, got, want)
		}
		ps, total := storetest.MustFind(t, s, procedures.Query{})
		got := make([]string, len(ps))
		for i, p := range ps {
			got[i] = p.Name
		}
		if !slices.Equal(got, want) || total != len(want) {
			t.Fatalf("%s: Find %v (total %d), want %v", what, got, total, want)
		}
		for off := range want {
			ps, _ := storetest.MustFind(t, s, procedures.Query{Limit: 2, Offset: off})
			if len(ps) == 0 || ps[0].Name != want[off] {
				t.Fatalf("%s: Find at offset %d starts with %v, want %s", what, off, ps, want[off])
			}
		}
	}
	requireOrder("after captures and uses")

	// A database from before rank (all but one procedure have none): Find
	// sees only the ranked one until Open backfills the others.
	run(t, s, "MATCH (p:Procedure) WHERE p.name <> $name REMOVE p.rank", map[string]any{"name": name(2)})
	if ps, _ := storetest.MustFind(t, s, procedures.Query{}); len(ps) != 1 {
		t.Fatalf("Find without ranks found %d procedures, want the 1 with a rank", len(ps))
	}
	s2, err := Open(ctx, settings(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	requireOrder("after backfill")
}

// TestRankBackfillBatches checks that the backfill goes on past one batch
// (of 50 here: the statement is the one of rankBatch).
func TestRankBackfillBatches(t *testing.T) {
	s := freshStore(t)
	s.rankBatch = 50
	n := 2*s.rankBatch + 5
	storetest.Fill(t, bulkStore{s, t}, n)
	run(t, s, "MATCH (p:Procedure) CALL { WITH p REMOVE p.rank } IN TRANSACTIONS OF 10000 ROWS", nil)
	if err := s.backfillRank(context.Background()); err != nil {
		t.Fatal(err)
	}
	recs := run(t, s, "MATCH (p:Procedure) WHERE p.rank IS NULL RETURN count(p) AS n", nil)
	if missing, _ := field(recs[0], "n").(int64); missing != 0 {
		t.Fatalf("%d of %d procedures have no rank after the backfill", missing, n)
	}
}

// TestFindAllPagePlan checks that Find is index-backed: the plans of
// find_all_page.cypher and find_page.cypher walk the procedure_rank index in
// order, with no Sort, PartialSort, Top or PartialTop, and without filters
// the index produces only the rows of the page (offset + limit), whatever
// the number of procedures; with filters it stops once the page is full.
func TestFindAllPagePlan(t *testing.T) {
	s := freshStore(t)
	ctx := context.Background()
	storetest.Fill(t, bulkStore{s, t}, 3000)
	requireRanks(t, s)
	yes := true
	cases := []struct {
		q    procedures.Query
		page string
	}{
		{procedures.Query{Limit: 25}, "find_all_page"},
		{procedures.Query{Limit: 25, Offset: 500}, "find_all_page"},
		{procedures.Query{}, "find_all_page"},
		{procedures.Query{Limit: 25, MinTools: 1, SkipTotal: true}, "find_page"},
		{procedures.Query{Limit: 25, Exposed: &yes, AllowMutating: true, SkipTotal: true}, "find_page"},
	}
	for _, c := range cases {
		q := c.q
		params, err := findParams(q)
		if err != nil {
			t.Fatal(err)
		}
		if q.Summarised() { // as Find sets them: every class there is
			var keys []string
			for _, rec := range run(t, s, "MATCH (k:ProcedureClass) RETURN k.key AS key", nil) {
				keys = append(keys, field(rec, "key").(string))
			}
			params["classes"] = keys
		}
		page, _ := findQueries(q)
		if page != c.page {
			t.Fatalf("Find(%+v) runs %s, want %s", q, page, c.page)
		}
		sess := s.driver.NewSession(ctx, neo4j.SessionConfig{AccessMode: neo4j.AccessModeRead, DatabaseName: s.db, BookmarkManager: s.bookmarks})
		summary := func(prefix string) neo4j.ResultSummary {
			res, err := sess.Run(ctx, replanned+prefix+cypher.Query(page), params)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := res.Collect(ctx); err != nil { // PROFILE wants the rows read
				t.Fatal(err)
			}
			sum, err := res.Consume(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return sum
		}

		plan := summary("EXPLAIN ").Plan()
		if plan == nil {
			t.Fatal("EXPLAIN returned no plan")
		}
		var ops []string
		for _, op := range explainOps(t, plan) {
			name := strings.SplitN(op.operator, "@", 2)[0]
			ops = append(ops, name)
			t.Logf("%s%s %s", strings.Repeat("  ", op.depth), name, op.details)
			if strings.Contains(name, "Sort") || strings.Contains(name, "Top") {
				t.Errorf("Find(%+v): plan has %s", q, name)
			}
		}
		if !slices.ContainsFunc(ops, func(op string) bool { return strings.HasPrefix(op, "NodeIndex") }) {
			t.Errorf("Find(%+v): plan reads no index: %v", q, ops)
		}

		// PROFILE: the index operator reads only the page's rows.
		var index neo4j.ProfiledPlan
		var find func(p neo4j.ProfiledPlan)
		find = func(p neo4j.ProfiledPlan) {
			if strings.HasPrefix(p.Operator(), "NodeIndex") {
				index = p
			}
			for _, c := range p.Children() {
				find(c)
			}
		}
		find(summary("PROFILE ").Profile())
		sess.Close(ctx)
		if index == nil {
			t.Fatalf("Find(%+v): plan reads no index: %v", q, ops)
		}
		if d := fmt.Sprint(index.Arguments()["Details"]); !strings.Contains(d, "rank") {
			t.Errorf("Find(%+v): %s reads %s, want the procedure_rank index", q, index.Operator(), d)
		}
		want := int64(3000)
		if q.Limit > 0 {
			want = int64(q.Offset + q.Limit)
		}
		if index.Records() > want {
			t.Errorf("Find(%+v): %s produced %d rows, want at most %d", q, index.Operator(), index.Records(), want)
		}
		t.Logf("Find(%+v): %s produced %d rows, %d db hits", q, index.Operator(), index.Records(), index.DbHits())
	}
}

type planOp struct {
	depth             int
	operator, details string
}

// explainOps returns the operators of an EXPLAIN plan, depth first. The
// driver's Plan.Children (neo4j-go-driver v5.28, built with Go 1.18 loop
// variables) returns its last child in every position, hiding the input
// (left) branch of every Apply, where a Sort would be; so the tree is read
// from the driver's plan record (db.Plan: Operator, Arguments, Children) by
// reflection. If that layout changes, the test fails here rather than
// checking half a plan.
func explainOps(t *testing.T, p neo4j.Plan) []planOp {
	t.Helper()
	v := reflect.ValueOf(p)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct || v.NumField() != 1 {
		t.Fatalf("driver plan %T: unknown layout", p)
	}
	v = reflect.Indirect(v.Field(0))
	var ops []planOp
	var walk func(v reflect.Value, depth int)
	walk = func(v reflect.Value, depth int) {
		op, args, children := v.FieldByName("Operator"), v.FieldByName("Arguments"), v.FieldByName("Children")
		if op.Kind() != reflect.String || args.Kind() != reflect.Map || children.Kind() != reflect.Slice {
			t.Fatalf("driver plan %s: unknown layout", v.Type())
		}
		var details string
		if d := args.MapIndex(reflect.ValueOf("Details")); d.IsValid() && d.Elem().Kind() == reflect.String {
			details = d.Elem().String()
		}
		ops = append(ops, planOp{depth, op.String(), details})
		for i := range children.Len() {
			walk(children.Index(i), depth+1)
		}
	}
	walk(v, 0)
	return ops
}
