package neo4j

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/cypher"
)

// TestExplain compiles every embedded statement (schema and queries) and
// every test-only one against the server, with EXPLAIN: nothing runs.
func TestExplain(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	stmts := map[string]string{}
	for _, stmt := range cypher.Schema {
		stmts["schema/"+strings.Fields(stmt)[2]] = stmt
	}
	for _, name := range cypher.QueryNames() {
		stmts["queries/"+name] = cypher.Query(name)
	}
	files, _ := filepath.Glob("testdata/*.cypher")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, stmt := range cypher.Split(cypher.Expand(string(b))) {
			stmts[f] = stmt
		}
	}
	for name, stmt := range stmts {
		t.Run(name, func(t *testing.T) {
			sess := s.driver.NewSession(ctx, neo4j.SessionConfig{DatabaseName: s.db})
			defer sess.Close(ctx)
			res, err := sess.Run(ctx, "EXPLAIN "+stmt, nil)
			if err == nil {
				_, err = res.Consume(ctx)
			}
			if err != nil {
				t.Fatalf("EXPLAIN %s: %v", stmt, err)
			}
		})
	}
}
