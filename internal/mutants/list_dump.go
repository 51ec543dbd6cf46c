package main

// The mutants of issue 35's dump and backup hardening: a dump's fields
// bounded as the API bounds them, one rule for who may read recordings,
// no offline command reading a half-finished import, one bound for a
// tool's description.
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "dump/summary-unbounded",
			Why:      "a dump's procedure summary is not bounded as the API bounds it: a 60 MiB summary imports, and every listing serves it",
			Edits:    []Edit{{Dir: "dump", Files: "bounds.go", Find: "\tb.str(\"procedure.summary\", fields.Summary, p.Summary)\n", Replace: ""}},
			Packages: []string{"./dump", "./cmd/procgraph"},
			Tests:    []string{"TestDumpFieldBounds", "TestImportRefusesOversizedFields"},
		},
		{
			Name:     "dump/bounds-unchecked",
			Why:      "the reader checks no record's field bounds: any field of any size a dump carries is imported",
			Edits:    []Edit{{Dir: "dump", Files: "file.go", Find: "\t\terr = d.boundErr(checkBounds(r))\n", Replace: ""}},
			Packages: []string{"./dump"},
			Tests:    []string{"TestDumpFieldBounds"},
		},
		{
			Name:     "api/backup-without-grant",
			Why:      "GET /v1/backup needs admin alone: an admin without grant reads the recordings (tool output) a backup carries",
			Edits:    []Edit{{Dir: "api", Files: "server.go", Find: "scope: auth.ScopeAdmin, recordings: true, handler: s.backup", Replace: "scope: auth.ScopeAdmin, handler: s.backup"}},
			Packages: []string{"./api"},
			Tests:    []string{"TestRecordingsScope"},
		},
		{
			Name:     "cmd/export-reads-unfinished-import",
			Why:      "export (and audit prune) read a store holding an unfinished import: half an import leaves as a valid dump that imports as a clean store",
			Edits:    []Edit{{Dir: "cmd/procgraph", Files: "export.go", Find: "\t\tif refuse {\n", Replace: "\t\tif false {\n"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestOfflineCommandsRefuseUnfinishedImport"},
		},
		{
			Name:     "procedures/catalogue-description-unbounded",
			Why:      "NewCatalogue skips the description's bound: serve --tools FILE (and a dump) take a 20 KB description PUT /v1/tools refuses",
			Edits:    []Edit{{Dir: "procedures", Files: "catalogue.go", Find: "\t\tif bounded {\n", Replace: "\t\tif false {\n"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestToolDescriptionBoundEveryPath"},
		},
	}...)
}
