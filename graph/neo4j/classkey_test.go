package neo4j

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/cypher"
	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
)

// classRows is, for each class, the parameters of a Procedure node of
// that class as classNode rebuilds it, r.i its index.
func classRows(classes []procedures.Class) []any {
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
	return rows
}

// classNode is the start of a statement over classRows: it binds i and p,
// a map with the properties of a Procedure node of that class.
const classNode = "UNWIND $rows AS r\nWITH r.i AS i, {status: r.status, opaque: r.opaque, signature: r.signature, read_only: r.read_only, problem: r.problem, retired_at: CASE WHEN r.retired THEN datetime() ELSE null END, demoted: r.demoted} AS p\n"

// cypherClassKeys returns fragments/class_key.cypher's key of each class.
func cypherClassKeys(t *testing.T, s *Store, classes []procedures.Class) []string {
	t.Helper()
	stmt := classNode + "RETURN i,\n" + cypher.Expand("#include class_key") + " AS key"
	recs := run(t, s, stmt, map[string]any{"rows": classRows(classes)})
	if len(recs) != len(classes) {
		t.Fatalf("%d keys for %d classes", len(recs), len(classes))
	}
	keys := make([]string, len(classes))
	for _, rec := range recs {
		i, _ := rec.Values[0].(int64)
		key, ok := rec.Values[1].(string)
		if !ok || key == "" {
			t.Fatalf("class %+v: key %v", classes[i], rec.Values[1])
		}
		keys[i] = key
	}
	return keys
}

// TestClassKeyDistinct: fragments/class_key.cypher gives every
// procedures.Class (storetest.Classes, built from the struct's fields) a
// key of its own, so Find's class filters and totals never merge two
// classes.
func TestClassKeyDistinct(t *testing.T) {
	s := openStore(t)
	classes := storetest.Classes()
	seen := map[string]int{}
	for i, key := range cypherClassKeys(t, s, classes) {
		if j, dup := seen[key]; dup {
			t.Fatalf("classes %+v and %+v share the key %q", classes[j], classes[i], key)
		}
		seen[key] = i
	}
}

// goClassKey is c's key as procedures.ClassFields defines Neo4j's class
// key, written in Go: what the generated fragments/class_key.cypher must
// compute (TestClassKeyIsGos).
func goClassKey(c procedures.Class) string {
	var parts []string
	for _, f := range procedures.ClassFields {
		switch {
		case f.Status != nil:
			parts = append(parts, string(*f.Status(&c)))
		case f.Count != nil:
			parts = append(parts, strconv.Itoa(*f.Count(&c)))
		case *f.Flag(&c):
			parts = append(parts, f.Token)
		case !f.Appended:
			parts = append(parts, "-")
		}
	}
	return strings.Join(parts, "|")
}

// TestClassKeyIsGos: fragments/class_key.cypher keys every
// procedures.Class (storetest.Classes) as goClassKey does.
func TestClassKeyIsGos(t *testing.T) {
	s := openStore(t)
	classes := storetest.Classes()
	for i, key := range cypherClassKeys(t, s, classes) {
		if want := goClassKey(classes[i]); key != want {
			t.Fatalf("class_key.cypher of %+v = %q, procedures.ClassFields gives %q", classes[i], key, want)
		}
	}
}

// classKeyGolden pins the ProcedureClass key of a few classes as stored
// databases hold them (p.class_key, ProcedureClass.key): a key that
// changed would orphan every stored class count. Literal, not regenerated.
var classKeyGolden = []struct {
	class procedures.Class
	key   string
}{
	{procedures.Class{Status: procedures.StatusFailed}, "failed|-|0|-|-"},
	{procedures.Class{Status: procedures.StatusSucceeded, Tools: 2, ReadOnly: true}, "succeeded|-|2|r|-"},
	{procedures.Class{Status: procedures.StatusFailed, Opaque: true, Tools: 1}, "failed|o|1|-|-"},
	{procedures.Class{Status: procedures.StatusSucceeded, Tools: 3, Problem: true, Retired: true}, "succeeded|-|3|-|x|retired"},
	{procedures.Class{Status: procedures.StatusSucceeded, Tools: 12, ReadOnly: true, Demoted: true}, "succeeded|-|12|r|-|demoted"},
	{procedures.Class{Status: procedures.StatusSucceeded, Opaque: true, Tools: 5, ReadOnly: true, Problem: true, Retired: true, Demoted: true}, "succeeded|o|5|r|x|retired|demoted"},
}

// TestGoClassKeyGolden: procedures.ClassFields keys the pinned classes as
// stored databases hold them (goClassKey; no server needed).
func TestGoClassKeyGolden(t *testing.T) {
	for _, g := range classKeyGolden {
		if got := goClassKey(g.class); got != g.key {
			t.Errorf("goClassKey(%+v) = %q, stored databases hold %q", g.class, got, g.key)
		}
	}
}

// TestClassKeyGolden: fragments/class_key.cypher keys the pinned classes
// as stored databases hold them.
func TestClassKeyGolden(t *testing.T) {
	s := openStore(t)
	classes := make([]procedures.Class, len(classKeyGolden))
	for i, g := range classKeyGolden {
		classes[i] = g.class
	}
	for i, key := range cypherClassKeys(t, s, classes) {
		if want := classKeyGolden[i].key; key != want {
			t.Errorf("class_key.cypher of %+v = %q, stored databases hold %q", classes[i], key, want)
		}
	}
}

// TestClassNodeRoundTrips: a ProcedureClass node that class_sync would
// make for a procedure of each class (fragments/class_key.cypher and
// class_create.cypher) reads back (classes.cypher, decodeClassCounts) as
// that class, under that key.
func TestClassNodeRoundTrips(t *testing.T) {
	s := freshStore(t)
	t.Cleanup(func() { run(t, s, testdata(t, "clean"), nil) })
	classes := storetest.Classes()
	stmt := classNode + "WITH i, p,\n" + cypher.Expand("#include class_key") + "\n  AS key\nMERGE (k:ProcedureClass {key: key})\n" +
		cypher.Expand("#include class_create") + "\nSET k.count = k.count + 1\nRETURN i, key"
	recs := run(t, s, stmt, map[string]any{"rows": classRows(classes)})
	if len(recs) != len(classes) {
		t.Fatalf("%d class nodes for %d classes", len(recs), len(classes))
	}
	keys := map[string]int{}
	for _, rec := range recs {
		i, _ := rec.Values[0].(int64)
		key, _ := rec.Values[1].(string)
		keys[key] = int(i)
	}
	counts, err := decodeClassCounts(run(t, s, cypher.Query("classes"), nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) != len(classes) {
		t.Fatalf("classes.cypher reads %d classes, %d were made", len(counts), len(classes))
	}
	for key, cc := range counts {
		i, ok := keys[key]
		switch {
		case !ok:
			t.Fatalf("classes.cypher reads a class under key %q, never made", key)
		case cc.class != classes[i] || cc.n != 1:
			t.Fatalf("class %+v (key %q) reads back as %+v, %d procedures", classes[i], key, cc.class, cc.n)
		}
	}
}
