package neo4j

import (
	"context"
	"fmt"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/cypher"
	"github.com/procgraph/procgraph/procedures"
)

// dbHits runs PROFILE of the stored query name with params and returns the
// db hits of its whole plan and its one row.
func dbHits(t testing.TB, s *Store, name string, params map[string]any) (int64, *neo4j.Record) {
	t.Helper()
	ctx := context.Background()
	sess := s.driver.NewSession(ctx, neo4j.SessionConfig{DatabaseName: s.db, BookmarkManager: s.bookmarks})
	defer sess.Close(ctx)
	res, err := sess.Run(ctx, replanned+"PROFILE "+cypher.Query(name), params)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	recs, err := res.Collect(ctx)
	if err != nil || len(recs) != 1 {
		t.Fatalf("%s: %d rows, %v", name, len(recs), err)
	}
	sum, err := res.Consume(ctx)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var hits func(p neo4j.ProfiledPlan) int64
	hits = func(p neo4j.ProfiledPlan) int64 {
		n := p.DbHits()
		for _, c := range p.Children() {
			n += hits(c)
		}
		return n
	}
	return hits(sum.Profile()), recs[0]
}

// TestFindReadsNoToolsItDoesNotAnswer checks that a Find statement reads the
// catalogue's tools only when it answers them (the stored revision is not
// the caller's): a Find that asks the revision alone, or whose caller holds
// it, costs the same whatever the number of tools.
func TestFindReadsNoToolsItDoesNotAnswer(t *testing.T) {
	s := freshStore(t)
	ctx := context.Background()
	tools := make([]procedures.Tool, 200)
	for i := range tools {
		tools[i] = procedures.Tool{Name: fmt.Sprintf("t%03d", i), ReadOnly: true}
	}
	cat, err := procedures.NewCatalogue(tools)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutCatalogue(ctx, cat); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"find_all", "catalogue_since"} {
		for _, tc := range []struct {
			name      string
			known     any
			wantTools int
		}{
			{"revision alone", nil, 0},
			{"held", cat.Revision, 0},
			{"other", "not-" + cat.Revision, len(tools)},
		} {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				hits, rec := dbHits(t, s, name, map[string]any{"known_catalogue": tc.known, "offset": 0, "limit": 25})
				got, _ := field(rec, "tools").([]any)
				if len(got) != tc.wantTools {
					t.Fatalf("%d tools, want %d (revision %v, known %v)", len(got), tc.wantTools, field(rec, "revision"), tc.known)
				}
				if tc.wantTools == 0 && hits >= int64(len(tools)) {
					t.Fatalf("%d db hits for no tools (%d in the catalogue): the tools are read", hits, len(tools))
				}
			})
		}
	}
}
