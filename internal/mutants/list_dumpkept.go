package main

// The mutants of issue 21's baselines and recordings in dumps
// (docs/dumps.md): a dump keeps a version's baseline, carries recordings
// only when asked, and checks the ones it carries.
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "cmd/export-ignores-with-recordings",
			Why:      "export --with-recordings writes no recordings: a store moved for verification arrives with nothing to verify against",
			Edits:    []Edit{{Dir: "cmd/procgraph", Files: "export.go", Find: "opts := dump.DumpOptions{Recordings: *withRecordings}", Replace: "opts := dump.DumpOptions{}; _ = withRecordings"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestExportWithRecordings"},
		},
		{
			Name:     "embedded/dump-baseline-dropped",
			Why:      "an embedded dump leaves out the versions' baselines: an import gives them the target's contracts and hides the drift the source knew",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "dump.go", Find: "Health: dump.HealthRecordOf(health.HealthOf(r.Health)), Baseline: r.Baseline,", Replace: "Health: dump.HealthRecordOf(health.HealthOf(r.Health)),"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestDumpBaselines/a_stale_version_stays_stale"},
		},
		{
			Name:     "embedded/load-baseline-dropped",
			Why:      "an import drops the dumped baseline: a stale version arrives up to date",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "dumpload.go", Find: "\t\tBaseline: v.Baseline,\n", Replace: ""}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestDumpBaselines/a_stale_version_stays_stale"},
		},
		{
			Name:     "embedded/merge-replaces-recordings",
			Why:      "a merge overwrites the target's recording of the same id with the dump's: the target's newer answers are lost",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "recordings.go", Find: "\tif tx.Bucket(bRecordings).Get(k) != nil {\n", Replace: "\tif _ = k; false {\n"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestDumpRecordings/merge"},
		},
		{
			Name:     "dump/recording-content-unchecked",
			Why:      "a recording whose body is not its content hash's is taken: a dump could pass altered tool answers off as recorded ones",
			Edits:    []Edit{{Dir: "dump", Files: "dump.go", Find: "if rec.ContentHash != r.ContentHash {", Replace: "if false {"}},
			Packages: []string{"./dump"},
			Tests:    []string{"TestKeptDumpsRefused"},
		},
		{
			Name:     "procedures/recording-id-unchecked",
			Why:      "a dumped recording's id is not checked against its version and arguments: one version could hold many recordings of one argument set under made-up ids",
			Edits:    []Edit{{Dir: "recording", Files: "recording.go", Find: "if want := RecordingID(codeHash, raw.Arguments); id != want {", Replace: "if want := RecordingID(codeHash, raw.Arguments); false && id != want {"}},
			Packages: []string{"./dump"},
			Tests:    []string{"TestKeptDumpsRefused"},
		},
		{
			Name:     "api/export-recordings-without-grant",
			Why:      "GET /v1/export?with_recordings=true answers an admin token without grant: tool output to a scope that may not read it",
			Edits:    []Edit{{Dir: "api", Files: "dump.go", Find: "if err := checkRecordings(principalOf(r), \"an export with recordings\"); err != nil {", Replace: "if err := checkRecordings(principalOf(r), \"an export with recordings\"); false && err != nil {"}},
			Packages: []string{"./api"},
			Tests:    []string{"TestRecordingsScope"},
		},
		{
			Name:     "neo4j/load-baseline-dropped",
			Why:      "load_versions.cypher drops the dumped baseline: a stale version arrives in Neo4j up to date",
			Edits:    []Edit{{Dir: "cypher/queries", Files: "load_versions.cypher", Find: ", v.baseline = r.baseline, v.baseline_keys = r.baseline_keys", Replace: ""}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestDumpBaselines/embedded_to_neo4j/a_stale_version_stays_stale"},
		},
	}...)
}
