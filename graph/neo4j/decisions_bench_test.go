package neo4j

import (
	"context"
	"fmt"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/graph/storetest"
)

// BenchmarkDecisionsFiltered: one filtered page (100 records) of an audit
// log of 1,000 and of 100,000 records on Neo4j, by each filter, as the
// embedded store's benchmark of the same name (the same fixture: 20
// actors, four kinds, one in seven denied, 50 procedures, a second apart).
func BenchmarkDecisionsFiltered(b *testing.B) {
	s := freshStore(b)
	filled := 0
	for _, n := range []int{1000, 100000} {
		fillDecisions(b, s, filled, n)
		filled = n
		for _, c := range storetest.DecisionFilterCases(n) {
			b.Run(fmt.Sprintf("%d/%s", n, c.Name), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					ds, err := s.ListDecisions(context.Background(), c.Filter)
					if err != nil || len(ds) == 0 {
						b.Fatalf("%d records, %v", len(ds), err)
					}
				}
			})
		}
	}
}

// fillDecisions appends records from to n, 5,000 a statement.
func fillDecisions(tb testing.TB, s *Store, from, n int) {
	tb.Helper()
	kinds := []audit.DecisionKind{audit.KindInvoke, audit.KindTurn, audit.KindGrant, audit.KindApproval}
	for start := from; start < n; start += 5000 {
		var rows []map[string]any
		for i := start; i < min(n, start+5000); i++ {
			d := storetest.Decision(kinds[i%4], fmt.Sprintf("proc__p%d", i%50), "h", storetest.At(i))
			d.Actor = fmt.Sprintf("actor-%d", i%20)
			if i%7 == 0 {
				d.Outcome = audit.Denied
			}
			rows = append(rows, map[string]any{"id": d.ID, "kind": string(d.Kind), "procedure": d.Procedure, "codeHash": d.CodeHash,
				"phase": "", "outcome": string(d.Outcome), "reason": d.Reason, "actor": d.Actor, "at": dbTime(d.At)})
		}
		run(tb, s, `UNWIND $rows AS r CREATE (:Decision {id: r.id, kind: r.kind, procedure: r.procedure, code_hash: r.codeHash,
			phase: r.phase, outcome: r.outcome, reason: r.reason, actor: r.actor, at: r.at, note: "", suggestion: "", session: ""})`, map[string]any{"rows": rows})
	}
}
