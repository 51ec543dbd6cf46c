package main

// The console's rules of issue 34 item 5: a grant offered only where the
// API says it would be accepted, a deep link's token stripped from the URL,
// and the audit log's filters.
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "console/grant-offered-where-not-grantable",
			Why:      "the procedure page offers Grant auto-run whatever auto_run.grantable says (a state-changing procedure with mutating auto-run off)",
			Edits:    []Edit{{Dir: "ui/static/pages", Files: "procedure.js", Find: "const grant = ar.grantable ? h(", Replace: "const grant = true ? h("}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestConsoleGrantOnlyWhereGrantable"},
		},
		{
			Name:     "console/token-left-in-url",
			Why:      "a deep link's token stays in the address bar and the tab's history",
			Edits:    []Edit{{Dir: "ui/static", Files: "api.js", Find: "history.replaceState(null, '', location.pathname + location.search + route);", Replace: ""}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestConsoleDeepLinkToken"},
		},
		{
			Name:     "audit/filter-actor-ignored",
			Why:      "an audit log filter by actor lists other actors' records where another index was walked (procedure and actor together)",
			Edits:    []Edit{{Dir: "audit", Files: "decision.go", Find: "f.Actor != \"\" && d.Actor != f.Actor,", Replace: ""}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore/DecisionFilters"},
		},
	}...)
}
