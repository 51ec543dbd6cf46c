package main

// The mutants of issue 38 item 1 (one statement on a write request's path
// on Neo4j: docs/adr/0047-write-path-one-statement.md).
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "procedures/capture-page-after-write",
			Why:      "a new procedure's suggestion page is read after the capture's write instead of with it (CaptureInput.Page): the request costs two statements",
			Edits:    []Edit{{Dir: "procedures", Files: "capture.go", Find: "if s.pageNeeded(prep) {", Replace: "if s.pageNeeded(prep) && false {"}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestCaptureReadsNothingItsWriteConfirmed"},
		},
		{
			Name:     "procedures/capture-rereads-catalogue",
			Why:      "a capture reads the catalogue again after its write, though the write confirmed the one it was prepared under: a second statement on Neo4j",
			Edits:    []Edit{{Dir: "procedures", Files: "capture.go", Find: "\ts.auth.remember(res.Procedure)\n\tv := prep.v\n", Replace: "\ts.auth.remember(res.Procedure)\n\tif c, err := s.store.Catalogue(ctx); err == nil {\n\t\tprep.in.Catalogue = c\n\t}\n\tv := prep.v\n"}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestCaptureReadsNothingItsWriteConfirmed"},
		},
		{
			Name:     "procedures/grant-reads-first",
			Why:      "a grant or revoke reads the procedure and the catalogue before its write though the service knows them: a second statement on Neo4j",
			Edits:    []Edit{{Dir: "procedures", Files: "grants.go", Find: "p, cat := s.auth.get(name), s.heldCatalogue()", Replace: "p, cat := (*Procedure)(nil), s.heldCatalogue()"}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestGrantPreparedFromWhatTheServiceKnows"},
		},
		{
			Name:     "procedures/grant-catalogue-unchecked",
			Why:      "a grant prepared from what the service knew does not ask its write to check the catalogue: it binds to a catalogue another instance replaced, inactive at once",
			Edits:    []Edit{{Dir: "procedures", Files: "grants.go", Find: "s.store.SetGrant(ctx, p.Name, g, p.CodeHash, v.cat, d)", Replace: "s.store.SetGrant(ctx, p.Name, g, p.CodeHash, nil, d)"}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestGrantPreparedFromWhatTheServiceKnows"},
		},
		{
			Name:     "procedures/grant-known-hash-refused",
			Why:      "a grant prepared from a known version another instance replaced is refused as code_changed (and audited) instead of prepared again from a read",
			Edits:    []Edit{{Dir: "procedures", Files: "grants.go", Find: "fault.CodeConflict && (known || (!r.Enabled && mayRetry))", Replace: "fault.CodeConflict && (!r.Enabled && mayRetry)"}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestGrantPreparedFromWhatTheServiceKnows"},
		},
		{
			Name:     "procedures/grant-known-status-refused",
			Why:      "a grant of a procedure the service knew as failed is refused (and audited) though it succeeded since",
			Edits:    []Edit{{Dir: "procedures", Files: "grants.go", Find: "\t\t\tif known {\n\t\t\t\treturn nil, audit.Decision{}, errRetryGrant\n\t\t\t}\n", Replace: "\n"}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestGrantPreparedFromWhatTheServiceKnows"},
		},
		{
			Name:     "embedded/grant-catalogue-unchecked",
			Why:      "the embedded store writes a grant prepared under a catalogue that is no longer the stored one",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "decisions.go", Find: "\t\tif err := s.sameCatalogue(tx, cat); err != nil {\n\t\t\treturn err\n\t\t}\n\t\tif rec.Current != expectHash {", Replace: "\t\tif rec.Current != expectHash {"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore/SetGrant/a_grant_or_revoke_prepared_under_another_catalogue_writes_nothing"},
		},
		{
			Name:     "neo4j/grant-catalogue-unchecked",
			Why:      "grant.cypher writes a grant prepared under a catalogue that is no longer the stored one",
			Edits:    []Edit{{Dir: "cypher/queries", Files: "grant.cypher", Find: "RETURN $catalogue IS NULL OR coalesce(cur.revision, '') IN $catalogue AS sameCatalogue", Replace: "RETURN true AS sameCatalogue"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestStore/SetGrant/a_grant_or_revoke_prepared_under_another_catalogue_writes_nothing"},
		},
		{
			Name:     "neo4j/capture-page-statement-again",
			Why:      "a capture of an existing procedure whose tools keep every holder unexposed reads the catalogue after its write: two statements on Neo4j",
			Edits:    []Edit{{Dir: "procedures", Files: "capture.go", Find: "if noneExposedWith(res.Procedure.Signature, v.cat, s.opts.AllowMutatingAutorun) {", Replace: "if _, err := s.store.Catalogue(ctx); err != nil || noneExposedWith(res.Procedure.Signature, v.cat, s.opts.AllowMutatingAutorun) {"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestWritePathStatements"},
		},
	}...)
}
