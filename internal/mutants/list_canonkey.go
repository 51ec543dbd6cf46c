package main

// Versions keyed by the canonical program (issue 39 item 2).
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "embedded/capture-ignores-canonical",
			Why:      "a capture of another text of a stored program makes a new version: versions sprawl with every regeneration",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "capture.go", Find: "if ver != nil || err != nil || in.Version.CanonicalHash == \"\" {", Replace: "if true {"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore/Canonical"},
		},
		{
			Name:     "embedded/canonical-index-last-wins",
			Why:      "the canonical index names the last version of a program stored, not the earliest captured: captures count on another version than Neo4j's",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "capture.go", Find: "if first != nil && (first.CapturedAt < r.CapturedAt", Replace: "if false && (first.CapturedAt < r.CapturedAt"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestCanonicalBackfill"},
		},
		{
			Name:     "embedded/canonical-not-backfilled",
			Why:      "versions stored before the canonical hash was kept never get one: their regenerations make new versions forever",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "capture.go", Find: "	if meta.Get(metaCanonical) != nil {\n\t\treturn nil", Replace: "	if true {\n\t\treturn nil"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestCanonicalBackfill"},
		},
		{
			Name: "neo4j/capture-ignores-canonical",
			Why:  "capture.cypher keys the version by code hash only: a regeneration of a stored program makes a new version",
			Edits: []Edit{{Dir: "cypher/queries", Files: "capture.cypher", Find: "THEN $versionId ELSE sameIds[0] END AS versionId",
				Replace: "THEN $versionId ELSE $versionId END AS versionId"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestStore/Canonical"},
		},
		{
			Name:     "neo4j/canonical-not-backfilled",
			Why:      "versions stored before the canonical hash was kept (or loaded from a dump) never get one on Neo4j",
			Edits:    []Edit{{Dir: "cypher/queries", Files: "canonical_missing.cypher", Find: "WHERE v.canonical_hash IS NULL AND", Replace: "WHERE false AND"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestCanonicalBackfill"},
		},
		{
			Name:     "procedures/capture-without-canonical",
			Why:      "the service does not compute the canonical hash: no store can key a capture by its program",
			Edits:    []Edit{{Dir: "procedures", Files: "capture.go", Find: "			CanonicalHash: canonical,\n", Replace: "\t\t\tCanonicalHash: canonical[:0],\n"}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestCaptureOfAnotherTextIsAUse"},
		},
	}...)
}

// Approvals that cover the canonical program (issue 39 item 3).
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "gate/policy-program-not-looked-up",
			Why:      "a session policy covers its exact text only: a regenerated block is asked again",
			Edits:    []Edit{{Dir: "gate", Files: "gate.go", Find: `if ok || err != nil || b.Binding.Program == "" || !undecided() {`, Replace: "if true {"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestPolicyCoversTheProgram"},
		},
		{
			Name:     "procedures/program-key-ignores-arguments",
			Why:      "a policy on a state-changing block covers it with argument values the operator never saw",
			Edits:    []Edit{{Dir: "procedures", Files: "canonical.go", Find: "b, err := json.Marshal(args) // map keys sorted: canonical", Replace: "b, err := json.Marshal(args == nil) // map keys sorted: canonical"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestPolicyCoversTheProgram"},
		},
		{
			Name:     "procedures/program-key-lifts-writes",
			Why:      "a state-changing block's key is its lifted program: a policy covers the same kill of another job",
			Edits:    []Edit{{Dir: "procedures", Files: "canonical.go", Find: "\tif !readOnly {\n", Replace: "\tif !readOnly && false {\n"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestPolicyCoversTheProgram"},
		},
		{
			Name:     "procedures/program-key-keeps-exact-args",
			Why:      "a policy with a program key still covers its exact text with any argument values",
			Edits:    []Edit{{Dir: "binding", Files: "binding.go", Find: "\t\treturn b.Program == cur.Program\n", Replace: "\t\treturn b.Program == cur.Program || b.CodeHash == cur.CodeHash\n"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestPolicyCoversTheProgram"},
		},
	}...)
}

// Durable grants that cover the canonical program; auto_run of a read
// grants it (issue 39 item 3).
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name: "gate/granted-program-not-looked-up",
			Why:  "a granted procedure's program written as a block is reviewed again: the grant covers only proc__ calls",
			Edits: []Edit{{Dir: "gate", Files: "gate.go", Find: "if program = g.grantedProgram(ctx, b); program != nil {", Replace: "if program = g.grantedProgram(ctx, b); false {"},
				{Dir: "gate", Files: "gate.go", Find: "				in.GrantActive = program != nil\n", Replace: "				in.GrantActive = false\n"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestAutoRunOfAReadGrantsItsProgram"},
		},
		{
			Name:     "gate/granted-program-any-code",
			Why:      "a grant covers any block of its procedure's signature, whatever program it is",
			Edits:    []Edit{{Dir: "gate", Files: "gate.go", Find: `if mine.Hash != gp.Program.Hash {`, Replace: `if mine.Hash == "" {`}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestAutoRunOfAReadGrantsItsProgram", "TestGrantCoversTheProgramUpToNames"},
		},
		{
			Name:     "gate/single-read-not-granted",
			Why:      "auto_run on one read-only call only sets a session policy: every session asks again",
			Edits:    []Edit{{Dir: "gate", Files: "resolve.go", Find: "if r == nil || r.Choice != ChoiceAutoRun || !singleRead(b)", Replace: "if true || r.Choice != ChoiceAutoRun || !singleRead(b)"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestAutoRunOfAReadGrantsItsProgram"},
		},
		{
			Name:     "gate/single-read-grants-writes",
			Why:      "auto_run on one state-changing call becomes a durable grant for every caller",
			Edits:    []Edit{{Dir: "gate", Files: "resolve.go", Find: "!b.Analysis.Opaque && b.Class.ReadOnly && b.Class.Problem", Replace: "!b.Analysis.Opaque && b.Class.Problem"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestAutoRunOfAWriteGrantsNothing"},
		},
	}...)
}
