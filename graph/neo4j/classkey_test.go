package neo4jstore

import (
	"fmt"
	"testing"

	"github.com/procgraph/procgraph/cypher"
	"github.com/procgraph/procgraph/graph/storetest"
)

// TestClassKeyDistinct: fragments/class_key.cypher gives every
// procedures.Class (storetest.Classes, built from the struct's fields) a
// key of its own, so Find's class filters and totals never merge two
// classes.
func TestClassKeyDistinct(t *testing.T) {
	s := openStore(t)
	classes := storetest.Classes()
	rows := make([]any, len(classes))
	for i, c := range classes {
		sig := make([]any, c.Tools)
		for j := range sig {
			sig[j] = fmt.Sprintf("t%d", j)
		}
		problem := ""
		if c.Problem {
			problem = "cycle"
		}
		rows[i] = map[string]any{"i": i, "status": string(c.Status), "opaque": c.Opaque, "signature": sig,
			"read_only": c.ReadOnly, "problem": problem, "retired": c.Retired, "demoted": c.Demoted}
	}
	stmt := "UNWIND $rows AS r\nWITH r.i AS i, {status: r.status, opaque: r.opaque, signature: r.signature, read_only: r.read_only, problem: r.problem, retired_at: CASE WHEN r.retired THEN datetime() ELSE null END, demoted: r.demoted} AS p\nRETURN i,\n" +
		cypher.Expand("#include class_key") + " AS key"
	recs := run(t, s, stmt, map[string]any{"rows": rows})
	if len(recs) != len(classes) {
		t.Fatalf("%d keys for %d classes", len(recs), len(classes))
	}
	seen := map[string]int{}
	for _, rec := range recs {
		i, _ := rec.Values[0].(int64)
		key, ok := rec.Values[1].(string)
		if !ok || key == "" {
			t.Fatalf("class %+v: key %v", classes[i], rec.Values[1])
		}
		if j, dup := seen[key]; dup {
			t.Fatalf("classes %+v and %+v share the key %q", classes[j], classes[i], key)
		}
		seen[key] = int(i)
	}
}
