package main

// Mutants of concurrent new captures on Neo4j (docs/adr/0036): the striped
// catalogue lock and the sharded class counts.
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "neo4j/new-capture-takes-every-stripe",
			Why:      "capture.cypher takes every stripe of the catalogue lock for a new procedure classified from the held catalogue: new procedures wait for each other again",
			Edits:    []Edit{{Dir: "cypher/queries", Files: "capture.cypher", Find: "CASE WHEN $class IS NULL THEN range(0, $stripes - 1) ELSE [$stripe] END", Replace: "range(0, $stripes - 1)"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestCatalogueLockStripes"},
		},
		{
			Name:     "neo4j/nested-capture-takes-one-stripe",
			Why:      "capture.cypher takes one stripe of the catalogue lock for a new procedure classified in the transaction: it no longer waits for other new procedures (one it calls may be uncommitted)",
			Edits:    []Edit{{Dir: "cypher/queries", Files: "capture.cypher", Find: "CASE WHEN $class IS NULL THEN range(0, $stripes - 1) ELSE [$stripe] END", Replace: "[$stripe]"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestCatalogueLockStripes"},
		},
		{
			Name:     "neo4j/catalogue-lock-one-stripe",
			Why:      "catalogue_lock.cypher takes stripe 0 alone: a catalogue put no longer waits for new procedures classified from the catalogue it replaces",
			Edits:    []Edit{{Dir: "cypher/queries", Files: "catalogue_lock.cypher", Find: "UNWIND range(0, $stripes - 1) AS i", Replace: "UNWIND [0] AS i"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestCatalogueLockStripes"},
		},
		{
			Name:     "neo4j/new-procedure-shard-zero",
			Why:      "capture.cypher counts every new procedure in shard 0: new procedures of one class wait for one node's lock again",
			Edits:    []Edit{{Dir: "cypher/queries", Files: "capture.cypher", Find: "p.shard = $stripe,", Replace: "p.shard = 0,"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestNewProceduresSpreadOverShards"},
		},
		{
			Name:     "neo4j/class-count-one-shard",
			Why:      "class_count.cypher reads shard 0 alone: Find's totals with summary filters miss the procedures counted in other shards",
			Edits:    []Edit{{Dir: "cypher/fragments", Files: "class_count.cypher", Find: "WHERE s.shard IS NOT NULL", Replace: "WHERE s.shard = 0"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestNewProceduresSpreadOverShards"},
		},
		{
			Name:     "neo4j/class-count-drops-node-count",
			Why:      "class_count.cypher no longer adds the count kept on the ProcedureClass node: a store counted before the shards reads its classes empty",
			Edits:    []Edit{{Dir: "cypher/fragments", Files: "class_count.cypher", Find: "reduce(n = coalesce(k.count, 0),", Replace: "reduce(n = 0,"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestClassCountsBeforeShards"},
		},
		{
			Name:     "neo4j/tool-count-drops-tool-class",
			Why:      "find_filtered.cypher no longer adds the ToolClass nodes' counts: a store counted before the shards reads one-tool totals with summary filters as 0",
			Edits:    []Edit{{Dir: "cypher/queries", Files: "find_filtered.cypher", Find: "        MATCH (k:ToolClass {tool: t.name})\n        WHERE k.key IN coalesce($classes, [])\n", Replace: "        MATCH (k:ToolClass {tool: t.name})\n        WHERE false\n"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestClassCountsBeforeShards"},
		},
		{
			Name:     "neo4j/tool-count-drops-shards",
			Why:      "find_filtered.cypher no longer adds the ToolClassShard nodes' counts: one-tool totals with summary filters read only what was counted before the shards",
			Edits:    []Edit{{Dir: "cypher/queries", Files: "find_filtered.cypher", Find: "WHERE k.key IN coalesce($classes, []) AND k.shard IS NOT NULL", Replace: "WHERE false"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestNewProceduresSpreadOverShards", "TestStore/ToolTotals"},
		},
		{
			Name:     "neo4j/class-move-keeps-old-shard",
			Why:      "class_sync.cypher no longer takes a procedure out of its old class's shard when it moves: a promoted or newly succeeded procedure counts in two classes",
			Edits:    []Edit{{Dir: "cypher/fragments", Files: "class_sync.cypher", Find: "SET o.count = o.count - 1", Replace: "SET o.count = o.count"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestStore/Concurrency", "TestClassCountsBeforeShards"},
		},
		{
			Name:     "neo4j/tool-move-keeps-old-shard",
			Why:      "class_tools.cypher no longer takes a procedure's tools out of its old class's shard when it moves: one-tool totals with summary filters count it twice",
			Edits:    []Edit{{Dir: "cypher/fragments", Files: "class_tools.cypher", Find: "SET o.count = o.count - n", Replace: "SET o.count = o.count"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestStore/Concurrency", "TestClassCountsBeforeShards"},
		},
	}...)
}
