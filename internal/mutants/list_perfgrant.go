package main

// The mutants of a run's record of one statement sent with its BEGIN
// (docs/adr/0056-run-record-begins-with-its-statement.md).
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "neo4j/run-record-waits-for-begin",
			Why:      "a run's record of one statement runs in ExecuteWrite, which waits for BEGIN's answer before sending it: three round trips to Neo4j on an invoke's write where two do",
			Edits:    []Edit{{Dir: "graph/neo4j", Files: "capture.go", Find: "\tif len(run.uses) <= 1 {\n", Replace: "\tif false {\n"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestStatementRoundTrips"},
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
