package main

// The lead's mutants: the developer's loop (issue 22).
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "testcontainers/skip-under-ci",
			Why:      "without a Neo4j, CI reports ok with the Neo4j suite skipped",
			Edits:    []Edit{{Dir: "testcontainers", Find: `if os.Getenv("CI") == "true" {`, Replace: `if false {`}},
			Packages: []string{"./testcontainers"},
			Tests:    []string{"TestNoNeo4jFailsUnderCI"},
		},
	}...)
}
