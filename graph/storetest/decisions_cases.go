package storetest

import (
	"time"

	"github.com/procgraph/procgraph/audit"
)

// DecisionFilterCase is one filtered audit page the stores' decision
// benchmarks read.
type DecisionFilterCase struct {
	Name   string
	Filter audit.DecisionFilter
}

// DecisionFilterCases are the audit pages read over n decisions filled as
// the benchmarks fill them (their times At(0) … At(n-1)): unfiltered, by
// actor, outcome, kind, a procedure's denials and a tenth of the time.
func DecisionFilterCases(n int) []DecisionFilterCase {
	since := Ms(At(n / 2))
	return []DecisionFilterCase{
		{"all", audit.DecisionFilter{}},
		{"actor", audit.DecisionFilter{Actor: "actor-7"}},
		{"denied", audit.DecisionFilter{Outcome: audit.Denied}},
		{"kind", audit.DecisionFilter{Kind: audit.KindGrant}},
		{"kind+denied", audit.DecisionFilter{Kind: audit.KindTurn, Outcome: audit.Denied}},
		{"procedure+denied", audit.DecisionFilter{Procedure: "proc__p3", Outcome: audit.Denied}},
		{"time range", audit.DecisionFilter{Since: since, Until: since.Add(time.Duration(n/10) * time.Second)}},
	}
}
