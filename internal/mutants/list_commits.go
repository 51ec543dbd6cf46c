package main

// The mutants of issue 38 item 2: one commit per run (docs/design.md "One
// commit per run").
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "procedures/state-changing-run-not-durable-first",
			Why:      "a run that may change state has its decision stored only after it ran: a crash mid-run leaves state changed with no record of what allowed it",
			Edits:    []Edit{{Dir: "decide", Files: "decide.go", Find: "return !v.Allowed() || v.StateChanging", Replace: "return !v.Allowed()"}},
			Packages: []string{"./replay", "./cmd/procgraph"},
			Tests:    []string{"TestInvokeCommitsOnce", "TestInvokeFailsClosedWhenTheDecisionIsNotRecorded", "TestKilledMidRunKeepsWhatRanFirst"},
		},
		{
			Name:     "procedures/read-only-run-commits-twice",
			Why:      "every allowed run stores its decision before it runs: a read-only invoke or turn pays two fsync'd commits where one does",
			Edits:    []Edit{{Dir: "decide", Files: "decide.go", Find: "return !v.Allowed() || v.StateChanging", Replace: "return true"}},
			Packages: []string{"./replay", "./gate"},
			Tests:    []string{"TestInvokeCommitsOnce", "TestAutomaticTurnCommitsOnce"},
		},
		{
			Name:     "replay/deferred-record-dropped",
			Why:      "a decision stored with its run is never stored: the audit misses every read-only run",
			Edits:    []Edit{{Dir: "replay", Files: "pending.go", Find: "\t\tp.rr.Decisions = append(p.rr.Decisions, d)\n", Replace: "\n"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestInvokeCommitsOnce"},
		},
		{
			Name:     "replay/answered-without-its-record",
			Why:      "a read-only run whose record could not be stored is answered all the same: the caller gets data the audit never saw",
			Edits:    []Edit{{Dir: "replay", Files: "pending.go", Find: "if committed || len(rr.Decisions) == 0 {", Replace: "if committed || true {"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestInvokeFailsClosedWhenTheDecisionIsNotRecorded"},
		},
		{
			Name:     "gate/turn-run-uncommitted",
			Why:      "a turn's run is never committed: its decision (or its result), its health and its recording are lost",
			Edits:    []Edit{{Dir: "gate", Files: "gate.go", Find: "\treturn g.r.Commit(ctx, ran.pending)\n", Replace: "\treturn nil\n"}},
			Packages: []string{"./gate", "./cmd/procgraph"},
			Tests:    []string{"TestAutomaticTurnCommitsOnce", "TestKilledAfterTheAnswerLosesNothing"},
		},
		{
			Name:     "embedded/run-unknown-use-refuses-run",
			Why:      "a run whose use names no stored version (a turn of new code) cannot commit: its decision and result are lost with the use",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "decisions.go", Find: "\t\t\t\tcontinue // an unknown procedure or version: this use writes nothing\n", Replace: "\t\t\t\treturn nil, err\n"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore/RecordRun"},
		},
		{
			Name:     "neo4j/run-conflict-ignored",
			Why:      "Neo4j commits a run whose record or result conflicts with the stored one: the use is counted and the audit keeps a record that is not the run's",
			Edits:    []Edit{{Dir: "graph/neo4j", Files: "capture.go", Find: "if err := audited(recs[0], w.results); err != nil {", Replace: "if err := audited(recs[0], w.results); err != nil && false {"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestStore/RecordRun"},
		},
		{
			Name:     "embedded/lost-turn-drops-its-run",
			Why:      "a run that ends after the gate ended its turn as lost is not committed: its result, nested records and health are lost with the turn's ending",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "approvals.go", Find: "\t\tcase fault.ErrorCode(err) != fault.CodeConflict:\n", Replace: "\t\tdefault:\n"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore/RecordRun"},
		},
		{
			Name:     "gate/approved-turn-done-apart",
			Why:      "an approved turn is marked done in a commit of its own before what its run left: three fsync'd commits where two do",
			Edits:    []Edit{{Dir: "gate", Files: "resolve.go", Find: "\tif !captures {\n\t\tg.addUse(ans, b, ran, \"\")\n\t}\n", Replace: "\tif !captures {\n\t\tg.addUse(ans, b, ran, \"\")\n\t}\n\t_, _ = g.turns.TransitionTurn(ctx, done, []TurnStatus{TurnRunning}, false, g.r.Now())\n"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestApprovedTurnClaimIsDurableFirst"},
		},
	}...)
}
