package main

func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "neo4j/search-rank-drifts",
			Why:      "search.cypher's score drifts from search.Score (log10 for ln): Neo4j pages and scores a search unlike the embedded store (docs/adr/0016)",
			Edits:    []Edit{{Dir: "cypher/queries", Files: "search.cypher", Find: "log(1 + p.frequency)", Replace: "log10(1 + p.frequency)"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestStore"},
		},
	}...)
}
