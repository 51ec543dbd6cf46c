package main

// The mutants of one statement in one round trip: a store call of one
// statement runs as an auto-commit transaction, a run's record of one
// statement sends BEGIN with it (docs/adr/0056-one-statement-one-round-trip.md).
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name: "neo4j/one-statement-managed",
			Why:  "a store call of one statement runs in an explicit transaction: BEGIN with the statement, then COMMIT, two round trips to Neo4j on every grant, revoke, capture and read where one does",
			Edits: []Edit{{Dir: "graph/neo4j", Files: "store.go", Find: "\t\tres, err := sess.Run(ctx, cypher.Query(name), params)\n",
				Replace: "\t\ttx, err := sess.BeginTransaction(ctx)\n\t\tif err != nil {\n\t\t\treturn err\n\t\t}\n\t\tdefer func() { _ = tx.Commit(ctx) }()\n\t\tres, err := tx.Run(ctx, cypher.Query(name), params)\n"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestOneStatementOneRoundTrip"},
		},
		{
			Name:     "neo4j/run-record-waits-for-begin",
			Why:      "a run's record of one statement runs in ExecuteWrite, which waits for BEGIN's answer before sending it: three round trips to Neo4j on every invoke's write where two do",
			Edits:    []Edit{{Dir: "graph/neo4j", Files: "capture.go", Find: "\tif len(run.uses) <= 1 {\n", Replace: "\tif false {\n"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestOneStatementOneRoundTrip"},
		},
		{
			Name:     "neo4j/run-record-conflict-committed",
			Why:      "a run's record of one statement commits though its records show a conflict: the run's use is written beside a refused record",
			Edits:    []Edit{{Dir: "graph/neo4j", Files: "store.go", Find: "\treturn struct{}{}, c.check(c.recs)\n", Replace: "\t_ = c.check(c.recs)\n\treturn struct{}{}, nil\n"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestStore/RecordRun"},
		},
	}...)
}
