package main

// The mutants of issue 20's health per version (docs/design.md "Health of
// each version").
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "replay/failed-runs-uncounted",
			Why:      "only successful replays reach the store: a version that fails every time shows a perfect record",
			Edits:    []Edit{{Dir: "replay", Find: "if in, ok := r.svc.RunUse(", Replace: "if out.Status != StatusSucceeded {\n\t} else if in, ok := r.svc.RunUse("}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestRunsCountInHealth"},
		},
		{
			Name:     "procedures/health-consecutive-never-resets",
			Why:      "a success does not reset consecutive failures: a recovered version stays on the way to demotion",
			Edits:    []Edit{{Dir: "health", Find: "\t\td.Keep[hvConsecutive] = 0\n", Replace: "\n"}},
			Packages: []string{"./procedures", "./graph/embedded"},
			Tests:    []string{"TestHealthAdd", "TestStore/Health/runs_count_on_the_version"},
		},
		{
			Name:     "embedded/failed-run-counts-as-use",
			Why:      "a failed run counts its usage key: frequency, the rank planners see, grows with failures",
			Edits:    []Edit{{Dir: "graph/embedded", Find: "\t\t\tif in.HealthOnly() {\n\t\t\t\tif res.Demotion", Replace: "\t\t\tif false {\n\t\t\t\tif res.Demotion"}},
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
		{
			Name:     "dump/health-unchecked",
			Why:      "a dump's health is taken as written: a crafted dump shows a failing version as always succeeding (runs that do not add up)",
			Edits:    []Edit{{Dir: "dump", Find: "} else if why := h.check(); why != \"\" {", Replace: "} else if why := \"\"; why != \"\" {"}},
			Packages: []string{"./dump"},
			Tests:    []string{"TestDumpFormats"},
		},
		{
			Name:     "embedded/merge-keeps-store-health",
			Why:      "a merge keeps the store's health even when the dump's version ran more: the runs of the other history are lost",
			Edits:    []Edit{{Dir: "graph/embedded", Find: "ver.Health = healthVector(dump.MergeHealth(health.HealthOf(ver.Health), v.Health.Health()))", Replace: "_, _ = dump.MergeHealth, health.HealthOf"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestDumpMerge/the_target's_state_is_kept"},
		},
		{
			Name:     "neo4j/merge-keeps-store-health",
			Why:      "merge_versions.cypher keeps the store's health even when the dump's version ran more",
			Edits:    []Edit{{Dir: "cypher/queries", Files: "merge_versions.cypher", Find: "v.health = CASE WHEN coalesce(r.health[0], 0) > coalesce(v.health[0], 0) THEN r.health ELSE v.health END,", Replace: "v.health = v.health,"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestDumpMerge/embedded_into_neo4j/the_target's_state_is_kept"},
		},
		{
			Name:     "neo4j/dump-drops-health",
			Why:      "a Neo4j dump leaves out its versions' health: a restore forgets which versions fail",
			Edits:    []Edit{{Dir: "graph/neo4j", Find: "\t\t\t\tHealth: dump.HealthRecordOf(dv.Health),\n", Replace: "\n"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestDumpRoundTrip/neo4j_to_embedded"},
		},
		{
			Name:     "gate/turn-runs-uncounted",
			Why:      "a turn that runs a stored version's code is not a run of it: the version's health misses the agents' own runs of it",
			Edits:    []Edit{{Dir: "gate", Find: "if in, ok := g.svc.BlockUse(b.Analysis.Name, hash,", Replace: "if in, ok := g.svc.BlockUse(b.Analysis.Name, \"\","}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestTurnsCountInTheirVersionsHealth"},
		},
		{
			Name:     "replay/descriptor-hides-record",
			Why:      "the planner view leaves out a procedure's record: a planner cannot tell a version that fails from one that works",
			Edits:    []Edit{{Dir: "replay", Find: "if note := p.Health.Note(); note != \"\" {", Replace: "if note := p.Health.Note(); false {"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestRunsCountInHealth"},
		},
	}...)
}
