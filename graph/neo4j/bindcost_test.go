package neo4j

import (
	"context"
	"testing"
	"time"

	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/replay/replaytest"
)

// TestBindingChecksCostNoStatement: on Neo4j, a turn decided (and run) by
// a session policy and one decided by a durable grant run exactly the
// statements they ran before bindings (QueryObserver): the binding checks
// read nothing more.
func TestBindingChecksCostNoStatement(t *testing.T) {
	s := freshStore(t)
	g, policy, grant := replaytest.BindCost(t, s, s)
	for _, c := range []struct {
		name   string
		req    gate.TurnRequest
		reason string
		want   string
	}{
		// find_filtered is the reuse suggestion of a block that is not
		// proc__-only; procedure_catalogue reads a procedure with the
		// catalogue (procedures.CatalogueGetter, ADR 0020). The writes:
		// the turn's decision before it runs (it may change state), then
		// one transaction after the run (Store.RecordRun, docs/design.md
		// "One commit per run"): the nested procedure's decision with its
		// result, the turn's result, the nested success (use) and the
		// turn's run in the health of a stored version of its code
		// (use_health: none here, it writes nothing).
		{"policy", policy, procedures.ReasonSessionPolicy, "catalogue_since×1 decision_append×2 decision_result×1 find_filtered×1 policy_get×1 procedure_catalogue×1 procedures_by_name×1 use_health×1 use×1"},
		{"grant", grant, procedures.ReasonDurableAutoRun, "catalogue_since×1 decision_append×2 decision_result×1 policy_get×1 procedure_catalogue×1 procedures_by_name×1 use_health×1 use×1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var n replaytest.Counter
			octx := WithQueryObserver(context.Background(), func(q string, _, _ time.Duration) { n.Add(q) })
			ans, err := g.Submit(octx, c.req)
			if err != nil || !ans.Ran() || ans.Decision.Reason != c.reason || ans.Status != replay.StatusSucceeded {
				t.Fatalf("submit: %+v, %v", ans, err)
			}
			if s := n.Take(); s != c.want {
				t.Fatalf("statements %s, want %s (the binding checks add none)", s, c.want)
			}
		})
	}
}
