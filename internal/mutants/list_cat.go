package main

// An instance reads its own catalogue writes, and the capture answer names
// the version it stored (issue 35 item 8, ADR 0038).
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name: "procedures/capture-not-prepared-again",
			Why:  "a capture the store refuses because the catalogue changed is not prepared again under the stored catalogue: a capture right after PUT /v1/tools fails instead of lifting",
			Edits: []Edit{{Dir: "procedures", Files: "capture.go", Find: "if !IsCatalogueChanged(err) || attempt == maxCatalogueAttempts {",
				Replace: "if true {"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCaptureSeesCatalogueJustPut"},
		},
		{
			Name:     "procedures/capture-catalogue-unchecked",
			Why:      "the service does not name the catalogue a capture was prepared under: the store checks nothing and the capture lifts with the stale catalogue the instance read before a PUT",
			Edits:    []Edit{{Dir: "procedures", Files: "capture.go", Find: "Catalogue: cat,", Replace: "Catalogue: nil,"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCaptureSeesCatalogueJustPut"},
		},
		{
			Name:     "embedded/capture-skips-catalogue-check",
			Why:      "the embedded store writes a capture prepared under a catalogue that is no longer the stored one: the literal is stored unlifted after a PUT",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "capture.go", Find: "if stored.Revision != cat.Revision {", Replace: "if stored == nil {"}},
			Packages: []string{"./graph/embedded", "./cmd/procgraph"},
			Tests:    []string{"TestStore/Catalogue/a_capture_prepared_under_another_catalogue_writes_nothing", "TestCaptureSeesCatalogueJustPut"},
		},
		{
			Name: "neo4j/capture-skips-catalogue-check",
			Why:  "capture.cypher writes a capture of an existing procedure prepared under a catalogue another instance replaced: the new version is stored unlifted",
			Edits: []Edit{{Dir: "cypher/queries", Files: "capture.cypher", Find: "WHERE $catalogue IS NULL OR stored IN $catalogue",
				Replace: "WHERE $catalogue IS NULL OR stored IS NOT NULL"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestStore/Catalogue/a_capture_prepared_under_another_catalogue_writes_nothing", "TestCaptureSeesCatalogueOfAnyInstance"},
		},
		{
			Name:     "neo4j/capture-catalogue-change-is-a-name-conflict",
			Why:      "a capture the Neo4j transaction refuses because the catalogue changed is answered as a name held by another signature: the service takes the next name",
			Edits:    []Edit{{Dir: "graph/neo4j", Files: "capture.go", Find: "if !sameCatalogue(in.Catalogue, rev) {", Replace: "if rev == \"\" && false {"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestStore/Catalogue/a_capture_prepared_under_another_catalogue_writes_nothing"},
		},
		{
			Name: "procedures/capture-answers-current-version",
			Why:  "the capture answer's version names the procedure's current version, not the one the capture stored",
			Edits: []Edit{{Dir: "procedures", Files: "capture.go", Find: "stored := &CapturedVersion{CodeHash: hash,",
				Replace: "stored := &CapturedVersion{CodeHash: res.Procedure.CodeHash,"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCaptureAnswersStoredVersion"},
		},
		{
			Name: "cmd/capture-prints-current-hash",
			Why:  "procgraph capture prints the current version's hash as the code hash of a version it stored that is not current",
			Edits: []Edit{{Dir: "cmd/procgraph", Files: "commands.go", Find: `kv = append(kv, "code hash", v.CodeHash, "current", yesNo(false), "current version", p.CodeHash)`,
				Replace: `kv = append(kv, "code hash", p.CodeHash, "current", yesNo(false), "current version", p.CodeHash)`}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCaptureAnswersStoredVersion"},
		},
	}...)
}
