package main

// The mutants of issue 21's drift (docs/design.md "Drift").
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "procedures/drift-counts-description",
			Why:      "a tool's schema hash takes its description in: rewording a tool marks every version calling it stale (and deactivates its grants)",
			Edits:    []Edit{{Dir: "procedures", Find: `"read_only": t.ReadOnly, "external_access": t.ExternalAccess})`, Replace: `"read_only": t.ReadOnly, "external_access": t.ExternalAccess, "description": t.Description})`}},
			Packages: []string{"./api", "./graph/embedded"},
			Tests:    []string{"TestDriftRoundTrip", "TestStore/Drift/a_catalogue_change_makes_stale,_a_description_change_does_not"},
		},
		{
			Name:     "procedures/drift-ignores-read-only",
			Why:      "a tool turning state-changing is not named as such: drift says input_schema",
			Edits:    []Edit{{Dir: "procedures", Find: "if now.ReadOnly != was.ReadOnly {", Replace: "if false {"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore/Drift/a_catalogue_change_makes_stale,_a_description_change_does_not"},
		},
		{
			Name:     "procedures/drift-grant-stays-active",
			Why:      "a grant bound to a tool's old contract stays active after the contract changed (it must be inactive, catalogue_drift, until re-granted)",
			Edits:    []Edit{{Dir: "binding", Find: "case !slices.Equal(b.Tools, cur.Tools):\n\t\treturn InactiveCatalogueDrift", Replace: "case false:\n\t\treturn InactiveCatalogueDrift"}},
			Packages: []string{"./api"},
			Tests:    []string{"TestDriftRoundTrip"},
		},
		{
			Name:     "api/drift-accept-without-grant-scope",
			Why:      "accept-drift is open to the invoke scope: an agent rebaselines a version it wants to run",
			Edits:    []Edit{{Dir: "api", Find: `"/v1/procedures/{name}/versions/{code_hash}/accept-drift", scope: auth.ScopeGrant`, Replace: `"/v1/procedures/{name}/versions/{code_hash}/accept-drift", scope: auth.ScopeInvoke`}},
			Packages: []string{"./api", "./cmd/procgraph"},
			Tests:    []string{"TestRouteScopes", "TestDriftCommands"},
		},
		{
			Name:     "embedded/drift-accept-not-stale",
			Why:      "accept-drift of a version that is not stale is accepted and audited as if there was drift",
			Edits:    []Edit{{Dir: "graph/embedded", Find: "if len(procedures.DriftOf(r.Baseline, cat)) == 0 {", Replace: "if false {"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore/Drift/rebaseline_accepts,_once"},
		},
		{
			Name:     "neo4j/drift-accept-not-stale",
			Why:      "accept-drift of a version that is not stale is accepted and audited as if there was drift (Neo4j)",
			Edits:    []Edit{{Dir: "graph/neo4j", Find: "if len(procedures.DriftOf(old, cat)) == 0 {", Replace: "if false {"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestStore/Drift/rebaseline_accepts,_once"},
		},
		{
			Name:     "embedded/drift-cleared-under-another-catalogue",
			Why:      "a run that succeeded under an older catalogue clears the drift of a newer one",
			Edits:    []Edit{{Dir: "graph/embedded", Find: "if in.Revision != \"\" && cat.Revision != in.Revision {", Replace: "if false {"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore/Drift/rebaseline_after_a_run_waits_for_the_same_catalogue"},
		},
		{
			Name:     "replay/drift-left-after-success",
			Why:      "a successful run of a stale version under the current catalogue leaves it stale",
			Edits:    []Edit{{Dir: "replay", Find: "if prep.p.Stale && d.CodeHash == prep.p.CodeHash {", Replace: "if false {"}},
			Packages: []string{"./api"},
			Tests:    []string{"TestDriftRoundTrip"},
		},
		{
			Name: "embedded/drift-no-baseline-upgrade",
			Why:  "versions stored before drift was kept never get a baseline: no catalogue change ever marks them stale",
			Edits: []Edit{{Dir: "graph/embedded", Find: "if err := s.upgradeBaselines(tx); err != nil {", Replace: "if err := error(nil); err != nil {"},
				// upgradeCanonical rewrites old versions, which gives them a baseline too.
				{Dir: "graph/embedded", Files: "capture.go", Find: "	if meta.Get(metaCanonical) != nil {\n\t\treturn nil", Replace: "	if true {\n\t\treturn nil"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestBaselineUpgrade"},
		},
		{
			Name:     "neo4j/drift-no-baseline-backfill",
			Why:      "versions stored before drift was kept never get a baseline on Neo4j",
			Edits:    []Edit{{Dir: "graph/neo4j", Find: "if err := s.backfillBaselines(ctx); err != nil {", Replace: "if err := error(nil); err != nil {"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestBaselineBackfill"},
		},
	}...)
}

// The mutant of the schema hashes a catalogue answers.
func init() {
	mutants = append(mutants, Mutant{
		Name:     "procedures/schema-hash-carried-in-trusted",
		Why:      "a catalogue nobody hashed answers the schema_hash its tools carry in: authorizations and drift compare a hash the tool's contract may not have",
		Edits:    []Edit{{Dir: "procedures", Files: "catalogue.go", Find: "\tif c.byName != nil && t.SchemaHash != \"\" {\n", Replace: "\tif t.SchemaHash != \"\" {\n"}},
		Packages: []string{"./procedures"},
		Tests:    []string{"TestSchemaHashIsComputed"},
	})
}
