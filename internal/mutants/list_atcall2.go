package main

// The mutants of the review at the call's remaining rules (docs/design.md
// "Review at the call"): a run lost after its approved call was
// dispatched is ended run_lost at that call, audited by its digests; a
// paused turn holds no worker and no goroutine; the reads of a turn that
// never runs count in health.
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "atcall2/run-lost-unaudited",
			Why:      "a turn whose run was lost after its call was dispatched is ended failed with no audit record: nothing says which call may have taken effect",
			Edits:    []Edit{{Dir: "gate", Files: "gate.go", Find: "[]TurnStatus{TurnRunning}, false, d)", Replace: "[]TurnStatus{TurnRunning}, false)\n\t\t_ = d"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestAtCallCrashAfterDispatchNeverResends"},
		},
		{
			Name:     "atcall2/run-lost-names-no-call",
			Why:      "the run_lost record of a turn resumed at a call does not name the call: the operator cannot tell which kill may have run",
			Edits:    []Edit{{Dir: "gate", Files: "atcall.go", Find: "\tif c == nil {\n\t\treturn \"\"\n\t}\n\treturn fmt.Sprintf(\"run lost", Replace: "\tif c != nil {\n\t\treturn \"\"\n\t}\n\treturn fmt.Sprintf(\"run lost"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestAtCallCrashAfterDispatchNeverResends"},
		},
		{
			Name:     "atcall2/pause-holds-a-goroutine",
			Why:      "each pause keeps a goroutine until its deadline (a timer for its expiry): a server with many turns paused holds as many goroutines",
			Edits:    []Edit{{Dir: "gate", Files: "atcall.go", Find: "\trec.Deadline = t.RequestedAt.Add(g.opts.ApprovalTimeout)\n", Replace: "\trec.Deadline = t.RequestedAt.Add(g.opts.ApprovalTimeout)\n\tgo func() { <-time.After(g.opts.ApprovalTimeout) }()\n"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestAtCallPauseHoldsNothing"},
		},
		{
			Name:     "atcall2/paused-reads-uncounted",
			Why:      "the run at the call that pauses is counted only if the turn later ends: the reads of a turn rejected or expired at its pause count in no health",
			Edits:    []Edit{{Dir: "gate", Files: "atcall.go", Find: "\tg.countPause(t, b, pending, started)\n", Replace: ""}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestAtCallPausedReadsCountInHealth"},
		},
		{
			Name:     "atcall2/resumed-pause-uncounted",
			Why:      "a resume that pauses again is not counted: the reads it made after the approved call count in no health when the next pause is rejected",
			Edits:    []Edit{{Dir: "gate", Files: "atcall.go", Find: "\t\tg.countPause(running.Turn, b, pending, started)\n", Replace: ""}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestAtCallPausedReadsCountInHealth"},
		},
		{
			Name: "atcall2/later-pause-bounded",
			Why:  "a later pause is refused at the pending bound like a first one: the run is stranded after its approved call already ran",
			Edits: []Edit{{Dir: "gate", Files: "atcall.go", Find: "\t\tnext.Pauses++\n", Replace: "\t\tnext.Pauses++\n" +
				"\t\tif n, _ := g.turns.ListApprovals(ctx, ApprovalFilter{Status: TurnPending, Limit: MaxApprovalLimit}); len(n) >= g.opts.MaxPending {\n" +
				"\t\t\treturn nil, g.endResume(ctx, running, b, fault.Errorf(fault.CodeBusy, \"pending approvals at their bound\"))\n\t\t}\n"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestAtCallPauseIsAPendingApproval"},
		},
	}...)
}
