package storetest

import (
	"time"

	"github.com/procgraph/procgraph/procedures"
)

// DecisionFilterCase is one filtered audit page the stores' decision
// benchmarks read.
type DecisionFilterCase struct {
	Name   string
	Filter procedures.DecisionFilter
}

// DecisionFilterCases are the audit pages read over n decisions filled as
// the benchmarks fill them (their times At(0) … At(n-1)): unfiltered, by
// actor, outcome, kind, a procedure's denials and a tenth of the time.
func DecisionFilterCases(n int) []DecisionFilterCase {
	since := Ms(At(n / 2))
	return []DecisionFilterCase{
		{"all", procedures.DecisionFilter{}},
		{"actor", procedures.DecisionFilter{Actor: "actor-7"}},
		{"denied", procedures.DecisionFilter{Outcome: procedures.Denied}},
		{"kind", procedures.DecisionFilter{Kind: procedures.KindGrant}},
		{"kind+denied", procedures.DecisionFilter{Kind: procedures.KindTurn, Outcome: procedures.Denied}},
		{"procedure+denied", procedures.DecisionFilter{Procedure: "proc__p3", Outcome: procedures.Denied}},
		{"time range", procedures.DecisionFilter{Since: since, Until: since.Add(time.Duration(n/10) * time.Second)}},
	}
}
