package neo4jstore

import (
	"context"
	"strings"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/cypher"
)

// operators lists the operators of a plan, depth first.
func operators(p neo4j.Plan) []string {
	ops := []string{p.Operator()}
	for _, c := range p.Children() {
		ops = append(ops, operators(c)...)
	}
	return ops
}

// TestDumpPlans: the statements export and import run per page or batch
// seek indexes: none scans every node of a label (which would make a dump
// quadratic in the store's size).
func TestDumpPlans(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	for _, name := range []string{"dump_usage", "load_usage", "load_procedures", "load_versions", "load_edges", "load_decisions", "dump_decisions", "dump_procedures",
		"merge_conflicts", "merge_procedures", "merge_versions", "merge_edges", "merge_usage", "load_causes", "load_turns", "load_policies", "procedure_names", "classify_load"} {
		t.Run(name, func(t *testing.T) {
			sess := s.driver.NewSession(ctx, neo4j.SessionConfig{DatabaseName: s.db})
			defer sess.Close(ctx)
			res, err := sess.Run(ctx, "EXPLAIN "+cypher.Query(name), nil)
			if err != nil {
				t.Fatal(err)
			}
			sum, err := res.Consume(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ops := strings.Join(operators(sum.Plan()), " ")
			t.Logf("%s: %s", name, ops)
			if strings.Contains(ops, "NodeByLabelScan") || strings.Contains(ops, "AllNodesScan") {
				t.Errorf("%s scans a label: %s", name, ops)
			}
		})
	}
}
