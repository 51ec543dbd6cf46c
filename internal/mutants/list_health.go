package main

// The mutants of issue 20's health per version (docs/design.md "Health of
// each version").
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "replay/failed-runs-uncounted",
			Why:      "only successful replays reach the store: a version that fails every time shows a perfect record",
			Edits:    []Edit{{Dir: "replay", Find: "if err := r.svc.RecordRun(", Replace: "if out.Status != StatusSucceeded {\n\t} else if err := r.svc.RecordRun("}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestRunsCountInHealth"},
		},
		{
			Name:     "procedures/health-consecutive-never-resets",
			Why:      "a success does not reset consecutive failures: a recovered version stays on the way to demotion",
			Edits:    []Edit{{Dir: "procedures", Find: "\t\td.Keep[hvConsecutive] = 0\n", Replace: "\n"}},
			Packages: []string{"./procedures", "./graph/embedded"},
			Tests:    []string{"TestHealthAdd", "TestStore/Health/runs_count_on_the_version"},
		},
		{
			Name:     "embedded/failed-run-counts-as-use",
			Why:      "a failed run counts its usage key: frequency, the rank planners see, grows with failures",
			Edits:    []Edit{{Dir: "graph/embedded", Find: "\t\t\tif in.FailedRun() {\n\t\t\t\tif err := putVersion(tx, in.Name, ver); err != nil {", Replace: "\t\t\tif false {\n\t\t\t\tif err := putVersion(tx, in.Name, ver); err != nil {"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore/Health/runs_count_on_the_version"},
		},
		{
			Name:     "neo4j/health-add-ignores-keep",
			Why:      "health_add.cypher adds without Keep: consecutive failures never reset and the last failure's class is summed",
			Edits:    []Edit{{Dir: "cypher/fragments", Files: "health_add.cypher", Find: "THEN coalesce(v.health[i], 0) * $health.keep[i] + $health.add[i]", Replace: "THEN coalesce(v.health[i], 0) + $health.add[i]"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestHealthAddIsGos"},
		},
	}...)
}
