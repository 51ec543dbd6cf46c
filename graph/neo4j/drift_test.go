package neo4j

import (
	"context"
	"testing"

	"github.com/procgraph/procgraph/graph/storetest"
)

// TestBaselineBackfill: a database written before drift was kept (no
// contracts on the catalogue's tools, no baseline on the versions) gives
// every version the current catalogue's contracts when a store is opened
// on it again, in batches, once: a later catalogue change makes them
// stale, and opening again does not rebaseline them.
func TestBaselineBackfill(t *testing.T) {
	ctx := context.Background()
	s := freshStore(t)
	const n = 5
	cat := storetest.DriftUpgradeCatalogue(t, s, n)
	run(t, s, "MATCH (v:ProcedureVersion) REMOVE v.baseline, v.baseline_keys", nil)
	run(t, s, "MATCH (t:Tool) REMOVE t.contract, t.contract_key", nil)
	if v := storetest.MustVersion(t, s, storetest.NameOf("tool_a", "tool_b"), "ha"); v.Baseline != nil {
		t.Fatalf("the old version kept a baseline: %+v", v.Baseline)
	}
	defer func(b int) { baselineBatch = b }(baselineBatch)
	baselineBatch = 2
	again := openStore(t)
	storetest.RequireBaselines(t, again, n, cat, "backfilled")
	storetest.DriftedCatalogue(t, again)
	if _, total, err := again.Drifted(ctx, 0, 0); err != nil || total != n {
		t.Fatalf("Drifted after a change = %d, %v; want %d", total, err, n)
	}
	third := openStore(t)
	storetest.RequireBaselines(t, third, n, cat, "opened again")
}
