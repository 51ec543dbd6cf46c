package main

// The mutants of issue 34 item 2 (offline commands on Neo4j: docs/dumps.md
// "Neo4j"): each needs the Neo4j database to itself (Neo4j: true; run
// with NEO4J_URI and PROCGRAPH_TEST_NEO4J_OWN=1).
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "neo4j/import-over-data",
			Why:      "Neo4j says it is empty whatever it holds: `import --store neo4j` without --merge loads a dump over a database that holds data, mixing two stores' records",
			Edits:    []Edit{{Dir: "graph/neo4j", Find: `return field(recs[0], "used") == false, nil`, Replace: `return field(recs[0], "used") != nil, nil`}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestNeo4jImportRefusalsLoseNothing"},
			Neo4j:    true,
		},
		{
			Name:     "offline/unfinished-import-read",
			Why:      "export, backup and audit prune read a store holding an unfinished import: half an import is written out as a clean dump, a backup or an archive",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: "\tif refuse {\n\t\tif err := refuseUnfinishedImport(ctx, ds, cfg, refused); err != nil {", Replace: "\tif false {\n\t\tif err := refuseUnfinishedImport(ctx, ds, cfg, refused); err != nil {"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestNeo4jBackupRestorePrune"},
			Neo4j:    true,
		},
		{
			Name:     "offline/neo4j-restore-drops-grants",
			Why:      "`restore --store neo4j` loads the backup's session policies and durable grants inactive: the restored store is not the one backed up",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: "opts := dump.ImportOptions{Restore: true, TrustAuthorizations: true,", Replace: "opts := dump.ImportOptions{Restore: true, TrustAuthorizations: false,"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestNeo4jBackupRestorePrune"},
			Neo4j:    true,
		},
		{
			Name:     "dump/restore-audited-as-import",
			Why:      "a restore into Neo4j is audited as an import: the audit log does not say the store was replaced by a backup",
			Edits:    []Edit{{Dir: "dump", Find: "reason = audit.ReasonRestored", Replace: "reason = audit.ReasonImported"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestNeo4jBackupRestorePrune"},
			Neo4j:    true,
		},
	}...)
}
