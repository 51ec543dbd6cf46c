package main

// The mutants of issue 33's demotion (item 5; docs/design.md "Health of
// each version"): an outage demotes nothing, no caller demotes a
// procedure by its arguments, a procedure failing for every caller is
// still demoted, and only a verification or an operator lifts it.
func init() {
	const liftSubtest = "TestStore/Demotion/LiftDemotion_lifts,_starts_the_streak_again_and_records"
	mutants = append(mutants, []Mutant{
		{
			Name:     "procedures/demotion-one-caller",
			Why:      "one caller's failures demote: an agent token hides any procedure it may invoke by choosing arguments that make its tool fail",
			Edits:    []Edit{{Dir: "health", Files: "health.go", Find: "return hi != 0 && lo != 0 && hi+lo != CallerSpan", Replace: "return hi != 0 && lo != 0"}},
			Packages: []string{"./cmd/procgraph", "./procedures", "./graph/embedded"},
			Tests:    []string{"TestArgumentsCannotDemote", "TestDemotedAfter", "TestStore/Demotion/one_caller's_failures_never_demote"},
		},
		{
			Name:     "procedures/outage-counts-toward-demotion",
			Why:      "an unreachable or slow upstream counts toward demotion: an outage hides healthy procedures",
			Edits:    []Edit{{Dir: "health", Files: "health.go", Find: "var neutralClasses = []string{FailureUpstreamUnavailable, FailureTimeout}", Replace: "var neutralClasses = []string{}"}},
			Packages: []string{"./cmd/procgraph", "./procedures", "./graph/embedded"},
			Tests:    []string{"TestOutageDemotesNothing", "TestDemotedAfter", "TestStore/Demotion/outages_and_timeouts_neither_advance_nor_end_the_streak"},
		},
		{
			Name: "procedures/success-lifts-demotion",
			Why:  "any single success lifts a demotion: the caller who chose failing arguments, or any other, brings a failing procedure back with one run",
			Edits: []Edit{{Dir: "health", Files: "health.go", Find: "\tif wasDemoted || !current || !CountsTowardDemotion(failure) {\n",
				Replace: "\tif current && failure == \"\" {\n\t\treturn false\n\t}\n\tif wasDemoted || !current || !CountsTowardDemotion(failure) {\n"}},
			Packages: []string{"./cmd/procgraph", "./procedures", "./graph/embedded"},
			Tests:    []string{"TestDemotionHidesAndDenies", "TestDemotedAfter", "TestStore/Demotion/the_third_failure_of_two_callers_demotes,_a_success_does_not_lift"},
		},
		{
			Name:     "replay/caller-per-run",
			Why:      "a run's caller is not its principal but the run itself: one agent's failing invokes count as many callers and demote",
			Edits:    []Edit{{Dir: "replay", Files: "replayer.go", Find: "Caller: c.req.Actor}", Replace: "Caller: d.ID}"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestArgumentsCannotDemote"},
		},
		{
			Name:     "replay/runs-without-caller",
			Why:      "runs carry no caller: every failure looks like one caller's, and a procedure failing for everyone is never demoted",
			Edits:    []Edit{{Dir: "replay", Files: "replayer.go", Find: "Caller: c.req.Actor}", Replace: "}"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestDemotionHidesAndDenies"},
		},
		{
			Name:     "gate/turn-caller-per-run",
			Why:      "a turn's caller is the turn, not its requester: one agent's failing turns of a stored version's code count as many callers and demote it",
			Edits:    []Edit{{Dir: "gate", Files: "gate.go", Find: "Caller: t.RequestedBy}", Replace: "Caller: t.ID}"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestTurnsCarryTheirRequester"},
		},
		{
			Name:     "replay/failed-verification-lifts",
			Why:      "a verification that failed lifts the demotion: a procedure that no longer reproduces its recordings runs unattended again",
			Edits:    []Edit{{Dir: "replay", Files: "verify.go", Find: "if ans.Verification.Status == \"passed\" {\n\t\t// It reproduces", Replace: "if ans.Verification.Status != \"\" {\n\t\t// It reproduces"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestVerificationLiftsDemotion"},
		},
		{
			Name:     "api/undemote-read-scope",
			Why:      "lifting a demotion needs only the read scope: any token brings a failing procedure back to planners",
			Edits:    []Edit{{Dir: "api", Files: "server.go", Find: `"/v1/procedures/{name}/demotion", scope: auth.ScopeAdmin`, Replace: `"/v1/procedures/{name}/demotion", scope: auth.ScopeRead`}},
			Packages: []string{"./api", "./cmd/procgraph"},
			Tests:    []string{"TestRouteScopes", "TestDemotionHidesAndDenies"},
		},
		{
			Name:     "embedded/lift-unaudited",
			Why:      "an operator's lifting is not recorded: the audit log cannot say who brought a demoted procedure back",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "decisions.go", Find: "\t\tout, err = s.appendAndLoad(tx, d, in.Name)", Replace: "\t\tout, err = s.loadProcedure(tx, in.Name)"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{liftSubtest},
		},
		{
			Name:     "embedded/lift-ignores-version",
			Why:      "a verification of another version lifts the current one's demotion: an old version's recordings vouch for code they never ran",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "decisions.go", Find: `(in.CodeHash != "" && in.CodeHash != rec.Current) || `, Replace: ""}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{liftSubtest},
		},
		{
			Name:     "embedded/lift-ignores-catalogue",
			Why:      "a verification under a catalogue since replaced lifts a demotion: recordings of tools that changed vouch for the procedure",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "decisions.go", Find: `(in.Revision != "" && in.Revision != cat.Revision)`, Replace: `(in.Revision != "" && cat == nil)`}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{liftSubtest},
		},
		{
			Name:     "neo4j/demotion-one-caller",
			Why:      "demotion.cypher demotes on one caller's failures: on Neo4j an agent hides any procedure by its arguments",
			Edits:    []Edit{{Dir: "cypher/fragments", Files: "demotion.cypher", Find: "\n    AND coalesce(v.health[$demote.hi], 0) + coalesce(v.health[$demote.lo], 0) <> $demote.span", Replace: ""}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestDemotionIsGos"},
		},
		{
			Name:     "neo4j/lift-ignores-catalogue",
			Why:      "on Neo4j a verification under a catalogue since replaced lifts a demotion",
			Edits:    []Edit{{Dir: "graph/neo4j", Files: "grants.go", Find: "if !sameCatalogue(cat, in.Revision) {", Replace: "if cat == nil {"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{liftSubtest},
		},
		{
			Name:     "procedures/lift-keeps-streak",
			Why:      "lifting a demotion keeps the failure streak: the next failure alone demotes the procedure again",
			Edits:    []Edit{{Dir: "health", Files: "health.go", Find: "\td.Keep[hvStreak], d.Keep[hvCallersHi], d.Keep[hvCallersLo] = 0, 0, 0\n\treturn d", Replace: "\treturn d"}},
			Packages: []string{"./procedures", "./graph/embedded"},
			Tests:    []string{"TestDemotedAfter", liftSubtest},
		},
	}...)
}
