package neo4j

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/cypher"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/testcontainers"
)

var big = flag.Bool("neo4j.big", false, "also run the benchmarks on 100k procedures")

// settings returns where the test Neo4j is (testcontainers.Neo4j: NEO4J_URI,
// else a Docker container), or skips the test with how to get one.
func settings(tb testing.TB) Config {
	tb.Helper()
	n := testcontainers.Neo4j(tb)
	return Config{URI: n.URI, Username: n.Username, Password: n.Password, Database: n.Database}
}

// testdata returns the statements of testdata/<name>.cypher.
func testdata(tb testing.TB, name string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".cypher"))
	if err != nil {
		tb.Fatal(err)
	}
	stmts := cypher.Split(cypher.Expand(string(b)))
	if len(stmts) != 1 {
		tb.Fatalf("testdata/%s.cypher holds %d statements, want 1", name, len(stmts))
	}
	return stmts[0]
}

// replanned prefixes the EXPLAIN and PROFILE of the plan tests: the test
// server keeps a plan for an hour whatever the statistics do (ADR 0026:
// dbms.cypher.min_replan_interval, so that emptying the database between
// subtests does not re-plan every statement), and a plan test must see the
// plan the planner makes for the data it holds now. The test server plans
// for parameters of unknown size (ADR 0059:
// internal.cypher.use_parameter_size=false), so that is the plan checked.
const replanned = "CYPHER replan=force "

// run runs stmt in an auto-commit transaction of a fresh session on s.
func run(tb testing.TB, s *Store, stmt string, params map[string]any) []*neo4j.Record {
	tb.Helper()
	ctx := context.Background()
	sess := s.driver.NewSession(ctx, neo4j.SessionConfig{DatabaseName: s.db, BookmarkManager: s.bookmarks})
	defer sess.Close(ctx)
	res, err := sess.Run(ctx, stmt, params)
	if err != nil {
		tb.Fatalf("%s: %v", stmt, err)
	}
	recs, err := res.Collect(ctx)
	if err != nil {
		tb.Fatalf("%s: %v", stmt, err)
	}
	return recs
}

// openStore opens a store on the test Neo4j, closed at the end of the test.
func openStore(tb testing.TB) *Store {
	tb.Helper()
	s, err := Open(context.Background(), settings(tb))
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	schemaApplied.Store(true)
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// schemaApplied is set once a store of this test binary has applied the
// schema (Open): the database keeps it, so freshStore's later stores only
// connect. Applying it (a transaction per constraint and index, the wait
// for the indexes, the backfills) cost a fifth of the suite's time when
// every subtest's store did it. Tests of what Open does call openStore or
// Open.
var schemaApplied atomic.Bool

// freshStore empties the test database and opens a store on it: Open for
// the first store of the test binary, a connection to the database whose
// schema that one applied for the others. Tests in this package share the
// server's one database, so they never run in parallel.
func freshStore(tb testing.TB) *Store {
	tb.Helper()
	var s *Store
	if schemaApplied.Load() {
		var err error
		if s, err = connect(context.Background(), settings(tb)); err != nil {
			tb.Fatalf("connect: %v", err)
		}
		tb.Cleanup(func() { _ = s.Close() })
	} else {
		s = openStore(tb)
	}
	run(tb, s, testdata(tb, "clean"), nil)
	return s
}

// newStore is freshStore as storetest wants it.
func newStore(t *testing.T) procedures.Store { return freshStore(t) }

// requireFound fails the test unless Find on s, filtered by read_only,
// returns want procedures with total want.
func requireFound(t *testing.T, s *Store, readOnly bool, want int) {
	t.Helper()
	ps, total, err := s.Find(context.Background(), procedures.Query{Limit: 25, ReadOnly: &readOnly})
	if err != nil || total != want || len(ps) != want {
		t.Fatalf("Find(read_only=%v): %d procedures, total %d, %v; want %d", readOnly, len(ps), total, err, want)
	}
}
