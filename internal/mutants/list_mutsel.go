package main

func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "drain/change-stream-holds-the-drain",
			Why:      "a GET /v1/changes stream (a console open) does not end when the server drains: every stop waits the whole shutdown grace (30 s) for it",
			Edits:    []Edit{{Dir: "api", Files: "changes.go", Find: "\t\tcase <-s.draining:\n\t\t\treturn nil\n", Replace: ""}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCloseEndsChangeStreams"},
		},
	}...)
}
