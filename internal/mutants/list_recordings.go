package main

// The mutants of issue 21's recordings (docs/design.md "Verification
// against recorded tool responses").
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "replay/failed-runs-recorded",
			Why:      "a failed run keeps a recording: verification would hold a broken run up as what the procedure does",
			Edits:    []Edit{{Dir: "replay", Files: "replayer.go", Find: "\tif res.Err == nil {\n\t\tkept = r.Kept(", Replace: "\tif true {\n\t\tkept = r.Kept("}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestRecordingsKeptAndPurged"},
		},
		{
			Name:     "replay/calls-unrecorded",
			Why:      "the run's tool calls are not recorded: a recording cannot answer a verification",
			Edits:    []Edit{{Dir: "replay", Files: "nested.go", Find: "\t\tt.recorded = append(t.recorded, c)\n", Replace: "\t\t_ = c\n"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestRecordingsKeptAndPurged"},
		},
		{
			Name:     "embedded/recordings-unbounded",
			Why:      "a version keeps every recording: tool output grows without bound in the store",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "recordings.go", Find: "\tif len(all) <= keep {\n", Replace: "\tif true {\n"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore/Recordings/kept,_replaced,_bounded"},
		},
		{
			Name:     "neo4j/recordings-unbounded",
			Why:      "recordings_keep.cypher keeps every recording of a version",
			Edits:    []Edit{{Dir: "cypher/fragments", Files: "recordings_keep.cypher", Find: "FOREACH (x IN kept[keep..] | DELETE x)", Replace: "FOREACH (x IN [] | DELETE x)"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestStore/Recordings/kept,_replaced,_bounded"},
		},
		{
			Name:     "procedures/recording-with-a-failure",
			Why:      "the stores take a recording with a failed run",
			Edits:    []Edit{{Dir: "procedures", Files: "recording.go", Find: "\tcase in.Run == nil && !in.Replay, in.Run != nil && in.Run.Failure != \"\":\n", Replace: "\tcase in.Run == nil && !in.Replay:\n"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore/Recordings/bad_recordings_are_refused_and_change_nothing"},
		},
		{
			Name:     "cmd/recordings-kept-when-off",
			Why:      "--record-responses false leaves the stored recordings: tool output an operator turned off stays readable",
			Edits:    []Edit{{Dir: "cmd/procgraph", Files: "main.go", Find: "\tif !cfg.RecordResponses {\n\t\tn, err := svc.ForgetRecordings(ctx)", Replace: "\tif false {\n\t\tn, err := svc.ForgetRecordings(ctx)"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestRecordingsKeptAndPurged"},
		},
	}...)
}

// The mutants of verification against recordings.
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "replay/verify-ignores-arguments",
			Why:      "a verification answers a call whose arguments differ from the recording's: a changed procedure passes on answers meant for other arguments",
			Edits:    []Edit{{Dir: "replay", Files: "verify.go", Find: "\tif !sameJSON(args, want.Arguments) {\n", Replace: "\tif false {\n"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestVerifyAgainstRecordings"},
		},
		{
			Name:     "replay/verify-ignores-result",
			Why:      "a verification does not compare the result: a procedure computing something else from the same answers passes",
			Edits:    []Edit{{Dir: "replay", Files: "verify.go", Find: "\t\tcase got != rec.ResultHash:\n", Replace: "\t\tcase got == \"\" && false:\n"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestVerifyAgainstRecordings"},
		},
		{
			Name:     "replay/verify-ignores-schema",
			Why:      "a verification does not check calls against the tools' current input schemas: a tool server's breaking change passes",
			Edits:    []Edit{{Dir: "replay", Files: "verify.go", Find: "\tif why := c.invalid(name, args); why != \"\" {\n", Replace: "\tif why := c.invalid(name, args); false && why != \"\" {\n"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestVerifyAgainstRecordings"},
		},
		{
			Name:     "replay/verify-ignores-missing-calls",
			Why:      "a run that makes fewer calls than its recording passes",
			Edits:    []Edit{{Dir: "replay", Files: "verify.go", Find: "\tcase vc.n < len(rec.Calls):\n", Replace: "\tcase false:\n"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestVerifyAgainstRecordings"},
		},
	}...)
}

// The mutant of a kept verification.
func init() {
	mutants = append(mutants, Mutant{
		Name:     "replay/verification-not-kept",
		Why:      "a verification is answered but not kept: the version shows no verification, and a failing one is forgotten",
		Edits:    []Edit{{Dir: "replay", Files: "verify.go", Find: "\tif err := r.svc.SetVerification(context.WithoutCancel(ctx), name, codeHash, ans.Verification); err != nil {\n", Replace: "\tif err := error(nil); err != nil {\n"}},
		Packages: []string{"./replay"},
		Tests:    []string{"TestVerifyAgainstRecordings"},
	})
}

// The mutant of background verification.
func init() {
	mutants = append(mutants, Mutant{
		Name:     "cmd/stale-never-verified",
		Why:      "nothing verifies stale versions after a catalogue change: a tool server's breaking change is found by the next agent that hits it",
		Edits:    []Edit{{Dir: "cmd/procgraph", Files: "main.go", Find: "go func() { defer close(verified); rp.WatchCatalogue(bg) }()", Replace: "go func() { defer close(verified) }()"}},
		Packages: []string{"./cmd/procgraph"},
		Tests:    []string{"TestStaleVersionsVerifiedInTheBackground"},
	})
}

// The mutants of turns' recordings.
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "gate/turn-recording-without-lifted-arguments",
			Why:      "a captured turn's recording leaves out the literals its capture lifted: its version cannot replay it, and verification fails a version that works",
			Edits:    []Edit{{Dir: "gate", Files: "gate.go", Find: "\t\t\t\targs[l.Parameter] = l.Example\n", Replace: "\t\t\t\t_ = l\n"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestTurnsKeepRecordings"},
		},
		{
			Name:     "gate/turn-run-counted-on-its-own-code",
			Why:      "a captured turn's run is counted on the code as written, not the version it was stored as: a lifted version never gets the turn's run or recording",
			Edits:    []Edit{{Dir: "gate", Files: "gate.go", Find: "\tif captured != \"\" {\n\t\thash = captured\n", Replace: "\tif false {\n\t\thash = captured\n"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestTurnsKeepRecordings"},
		},
		{
			Name:     "neo4j/turn-recording-dropped",
			Why:      "Neo4j keeps no recording with a run that counts in the health only: turns never leave a recording to verify against",
			Edits:    []Edit{{Dir: "cypher/fragments", Files: "use_health_body.cypher", Find: "#include recording_put\n", Replace: "\n"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestStore/Recordings"},
		},
	}...)
}

// The mutants of a page of recordings.
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "embedded/recordings-page-ignores-offset",
			Why:      "every page of recordings starts at the newest: a client paging through them never sees the older ones",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "recordings.go", Find: "\t\tall = all[min(offset, len(all)):]\n", Replace: "\t\tall = all[min(0*offset, len(all)):]\n"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore/Recordings/pages"},
		},
		{
			Name:     "neo4j/recordings-page-unbounded",
			Why:      "Neo4j reads every recording of the procedure whatever the page: a page of 20 costs up to versions × 20 × 256 KiB",
			Edits:    []Edit{{Dir: "cypher/queries", Files: "recordings.cypher", Find: "  SKIP $offset LIMIT coalesce($limit, 2147483647)\n", Replace: "\n"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestStore/Recordings/pages"},
		},
	}...)
}

// The mutant of a verification cut short.
func init() {
	mutants = append(mutants, Mutant{
		Name:     "replay/verify-cut-short-stored",
		Why:      "a verification whose caller gave up is stored as failed (its runs were cancelled): the version loses the verification it had",
		Edits:    []Edit{{Dir: "replay", Files: "verify.go", Find: "\tif err := caller.Err(); err != nil {\n", Replace: "\tif err := caller.Err(); false && err != nil {\n"}},
		Packages: []string{"./replay"},
		Tests:    []string{"TestVerifyAgainstRecordings"},
	})
}

// The mutant of the background verifier's slot.
func init() {
	mutants = append(mutants, Mutant{
		Name:     "replay/background-verify-queues",
		Why:      "the background verification queues for a sandbox slot like a live replay: after a catalogue change, live replays wait behind it",
		Edits:    []Edit{{Dir: "replay", Files: "background.go", Find: "r.verify(ctx, v.Procedure, v.CodeHash, ActorBackground, true)", Replace: "r.verify(ctx, v.Procedure, v.CodeHash, ActorBackground, false)"}},
		Packages: []string{"./replay"},
		Tests:    []string{"TestBackgroundVerificationTakesASpareSlot"},
	})
}
