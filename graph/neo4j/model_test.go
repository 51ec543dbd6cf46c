package neo4j

import (
	"context"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
)

// TestGraphModel checks the graph analysts browse: the nodes and edges a
// capture, a catalogue and a decision leave.
func TestGraphModel(t *testing.T) {
	s := freshStore(t)
	ctx := context.Background()
	sig := []string{"fetch_logs", "get_jobs"}
	name := storetest.NameOf(sig...)
	storetest.MustCapture(t, s, storetest.WithCause(storetest.In(sig, "h1", "s:1", storetest.At(0)), "disk full", "the disk is full"))
	storetest.MustCapture(t, s, storetest.In(sig, "h2", "s:2", storetest.At(1)))
	cat, err := procedures.NewCatalogue([]procedures.Tool{{Name: "get_jobs", ReadOnly: true, Description: "jobs"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutCatalogue(ctx, cat); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendDecision(ctx, storetest.Decision(audit.KindInvoke, name, "h1", storetest.At(2))); err != nil {
		t.Fatal(err)
	}

	count := func(stmt string) int64 {
		t.Helper()
		recs := run(t, s, stmt, map[string]any{"name": name})
		n, _ := recs[0].Values[0].(int64)
		return n
	}
	for _, c := range []struct {
		stmt string
		want int64
	}{
		{"MATCH (p:Procedure {name: $name}) RETURN count(p)", 1},
		{"MATCH (:Procedure {name: $name})-[:CALLS]->(t:Tool) WHERE t.name IN ['fetch_logs', 'get_jobs'] RETURN count(t)", 2},
		{"MATCH (:Procedure {name: $name})-[:HAS_VERSION]->(v:ProcedureVersion) RETURN count(v)", 2},
		{"MATCH (p:Procedure {name: $name})-[:CURRENT]->(v:ProcedureVersion {code_hash: 'h1'}) WHERE p.code_hash = 'h1' RETURN count(v)", 1},
		{"MATCH (:Cause {name: 'disk full', description: 'the disk is full'})-[e:INVESTIGATED_BY {frequency: 1}]->(:Procedure {name: $name}) RETURN count(e)", 1},
		{"MATCH (t:Tool {name: 'get_jobs', in_catalogue: true, read_only: true, description: 'jobs'}) RETURN count(t)", 1},
		{"MATCH (t:Tool {name: 'fetch_logs'}) WHERE t.in_catalogue IS NULL RETURN count(t)", 1},
		{"MATCH (:Decision {kind: 'invoke'})-[:ABOUT]->(:Procedure {name: $name}) RETURN count(*)", 1},
		{"MATCH (u:UsageKey {scope: 'procedure', procedure: $name}) RETURN count(u)", 2},
		{"MATCH (u:UsageKey {scope: 'version', procedure: $name}) RETURN count(u)", 2},
		{"MATCH (u:UsageKey {scope: 'cause', procedure: $name}) RETURN count(u)", 1},
		{"MATCH (n) WHERE any(k IN keys(n) WHERE k IN ['_new', '_lock']) RETURN count(n)", 0},
	} {
		if got := count(c.stmt); got != c.want {
			t.Errorf("%s = %d, want %d", c.stmt, got, c.want)
		}
	}
}

// TestSchemaIdempotent opens twice: the schema applies again without error.
func TestSchemaIdempotent(t *testing.T) {
	openStore(t)
	s := openStore(t)
	recs := run(t, s, "SHOW CONSTRAINTS YIELD name RETURN collect(name) AS names", nil)
	names, _ := recs[0].Values[0].([]any)
	want := map[string]bool{"procedure_name": true, "procedure_version_id": true, "cause_name": true, "tool_name": true,
		"usage_key_id": true, "decision_id": true, "catalogue_id": true}
	for _, n := range names {
		delete(want, n.(string))
	}
	if len(want) != 0 {
		t.Errorf("missing constraints: %v", want)
	}
}
