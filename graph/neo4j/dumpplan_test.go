package neo4j

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
	for _, name := range []string{"dump_usage", "load_usage", "load_procedures", "load_versions", "load_edges", "load_decisions", "dump_decisions", "dump_procedures",
		"merge_conflicts", "merge_procedures", "merge_versions", "merge_edges", "merge_usage", "load_causes", "load_turns", "load_policies", "procedure_names", "classify_load"} {
		t.Run(name, func(t *testing.T) { requireNoLabelScan(t, s, name) })
	}
}

// requireNoLabelScan fails the test when the plan of the query name scans
// every node of a label.
func requireNoLabelScan(t *testing.T, s *Store, name string) {
	t.Helper()
	requireNoScan(t, s, name, cypher.Query(name))
}

// requireNoScan fails the test when the plan of stmt scans every node of a
// label. The driver's Plan.Children (v5.28.4) repeats an operator's last
// child in place of the others, so only the last branch of a plan is seen.
func requireNoScan(t *testing.T, s *Store, name, stmt string) {
	t.Helper()
	ctx := context.Background()
	sess := s.driver.NewSession(ctx, neo4j.SessionConfig{DatabaseName: s.db})
	defer sess.Close(ctx)
	res, err := sess.Run(ctx, replanned+"EXPLAIN "+stmt, nil)
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
}
