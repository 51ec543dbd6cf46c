package main

// The mutants of the one decision table and the one grant rule (issue 22
// item 1): each table row a replay and a turn share, and the grant rule
// both set_procedure_auto_run and a turn's auto_run approval apply.
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "procedures/automatic-state-changing-turn-runs",
			Why:      "the decision table's automatic row lets a state-changing turn fall through to the interactive rows",
			Edits:    []Edit{{Dir: "decide", Find: "{turns, automatic, deny(audit.ReasonStateChangingAuto, suggestInteractiveTurn)},", Replace: ""}},
			Packages: []string{"./decide"},
			Tests:    []string{"TestDecideTurns"},
		},
		{
			Name:     "procedures/grantable-ignores-mutating-off",
			Why:      "Grantable lets a state-changing procedure hold a grant while mutating auto-run is off (set_procedure_auto_run and a turn's auto_run alike)",
			Edits:    []Edit{{Dir: "procedures", Find: "case !p.ReadOnly && !allowMutating: return audit.ReasonNotReadOnly", Replace: "case false: return audit.ReasonNotReadOnly"}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestSetAutoRunAndPromote"},
		},
	}...)
}
