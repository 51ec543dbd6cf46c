package main

// The mutants of issue 20's demotion (docs/design.md "Health of each
// version": --demote-after consecutive failures of the current version).
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "procedures/exposed-ignores-demotion",
			Why:      "the exposure rule forgets demotion: a version failing every run stays offered to planners as a proc__ tool",
			Edits:    []Edit{{Dir: "procedures", Files: "exposure.go", Find: "!c.Retired && !c.Demoted &&", Replace: "!c.Retired &&"}},
			Packages: []string{"./procedures", "./graph/embedded"},
			Tests:    []string{"TestClassExposed", "TestDemotionIsAuditedAndPublished", "TestStore/Demotion"},
		},
		{
			Name:     "procedures/demotion-one-late",
			Why:      "the streak must exceed --demote-after instead of reaching it: one more failing run before anyone is protected",
			Edits:    []Edit{{Dir: "health", Files: "health.go", Find: "h.DemotionStreak >= int64(after)", Replace: "h.DemotionStreak > int64(after)"}},
			Packages: []string{"./procedures", "./graph/embedded"},
			Tests:    []string{"TestDemotionIsAuditedAndPublished", "TestStore/Demotion/the_third_failure_of_two_callers_demotes,_a_success_does_not_lift"},
		},
		{
			Name:     "procedures/demoted-grant-active",
			Why:      "a demoted procedure's grant stays active: state-changing code that fails every run keeps running unattended",
			Edits:    []Edit{{Dir: "procedures", Files: "view.go", Find: "\tcase p.Demoted:\n\t\ta.InactiveReason = ptr(inactiveUnhealthy)\n", Replace: ""}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestDemotionIsAuditedAndPublished"},
		},
		{
			Name:     "procedures/demoted-runs-automatically",
			Why:      "the decision table has no demotion row: an automatic invoke of a demoted procedure still runs its failing tools",
			Edits:    []Edit{{Dir: "decide", Files: "decide.go", Find: "return in.Demoted && automatic(in)", Replace: "return false && in.Demoted"}},
			Packages: []string{"./replay", "./cmd/procgraph"},
			Tests:    []string{"TestDecideTable", "TestDemotionHidesAndDenies"},
		},
		{
			Name:     "procedures/demotion-unaudited",
			Why:      "a demotion is not recorded: the audit log cannot say why a procedure vanished from planners",
			Edits:    []Edit{{Dir: "procedures", Files: "service.go", Find: "\trec, err := s.rec.Record(ctx, d)\n", Replace: "\trec, err := d, error(nil)\n"}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestDemotionIsAuditedAndPublished"},
		},
		{
			Name:     "embedded/any-version-demotes",
			Why:      "failures of a version that is not current demote the procedure: an old version nobody serves hides the working one",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "capture.go", Find: "health.DemotedAfter(was, hash == rec.Current,", Replace: "health.DemotedAfter(was, true,"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore/Demotion/runs_of_another_version_leave_it"},
		},
		{
			Name:     "embedded/promote-keeps-demotion",
			Why:      "a promote leaves the demotion: the operator's fix (another version) stays hidden",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "decisions.go", Find: "rec.Current, rec.Demoted = codeHash, false", Replace: "rec.Current = codeHash"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore/Demotion/a_promote_lifts_it"},
		},
		{
			Name:     "neo4j/demotion-one-late",
			Why:      "demotion.cypher demotes one failure after Go does: the stores disagree on the same runs",
			Edits:    []Edit{{Dir: "cypher/fragments", Files: "demotion.cypher", Find: ">= $demote.after", Replace: "> $demote.after"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestDemotionIsGos"},
		},
		{
			Name:     "neo4j/demotion-not-classed",
			Why:      "the class key leaves out demotion: Find's exposed filter (and the planner view) still offers a demoted procedure",
			Edits:    []Edit{{Dir: "cypher/fragments", Files: "class_key.cypher", Find: "CASE WHEN coalesce(p.demoted, false) THEN '|demoted' ELSE '' END", Replace: "''"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestStore/Demotion/the_third_failure_of_two_callers_demotes,_a_success_does_not_lift"},
		},
		{
			Name:     "dump/demotion-dropped",
			Why:      "an embedded dump leaves out the demotion: a restore offers planners a procedure that failed every run",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "dump.go", Find: "\t\tDemoted: rec.Demoted,\n", Replace: ""}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore/Demotion/a_dump_and_a_merge_keep_it"},
		},
	}...)
}
