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
