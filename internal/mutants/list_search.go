package main

func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "neo4j/search-filter-drifts",
			Why:      "search.cypher filters its hits unlike Find's statements (one cause enough → every cause needed): a search with causes answers other procedures than a find",
			Edits:    []Edit{{Dir: "cypher/fragments", Files: "find_where.cypher", Find: "WHERE c.name IN $causes })", Replace: "WHERE c.name IN $causes AND size($causes) = 1 })"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestStore/Search", "TestStore/Find"},
		},
	}...)
}
