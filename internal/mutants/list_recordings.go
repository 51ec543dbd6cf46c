package main

// The mutants of issue 21's recordings (docs/design.md "Verification
// against recorded tool responses").
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "replay/failed-runs-recorded",
			Why:      "a failed run keeps a recording: verification would hold a broken run up as what the procedure does",
			Edits:    []Edit{{Dir: "replay", Files: "replayer.go", Find: "if tc.recorded != nil && res.Err == nil {", Replace: "if tc.recorded != nil {"}},
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
			Why:      "recording_put.cypher keeps every recording of a version",
			Edits:    []Edit{{Dir: "cypher/fragments", Files: "recording_put.cypher", Find: "FOREACH (x IN kept[$recording.keep..] | DELETE x)", Replace: "FOREACH (x IN [] | DELETE x)"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestStore/Recordings/kept,_replaced,_bounded"},
		},
		{
			Name:     "procedures/recording-with-a-failure",
			Why:      "the stores take a recording with a failed run",
			Edits:    []Edit{{Dir: "procedures", Files: "recording.go", Find: "\tcase in.HealthOnly() || !in.Replay:\n", Replace: "\tcase false:\n"}},
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
