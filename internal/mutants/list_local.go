package main

// The mutants of issue 35 items 1, 6 and 9 (the CLI's human output): the
// CLI proves the server before it sends a credential it found, files are
// written where no one else's link can send them, and the CLI shows what a
// value holds.
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "credproof/token-without-proof",
			Why:      "the CLI sends the operator token it found in the registry on any connection: a listener on a dead serve's port gets it",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: "if proven != nil {", Replace: "if false {"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCLIProvesTheServerBeforeTheToken"},
		},
		{
			Name:     "credproof/proof-not-checked",
			Why:      "the CLI takes any answer to its challenge as the proof",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: "if !hmac.Equal([]byte(got), []byte(proofOf(key, challenge))) {", Replace: "if len(got) < 0 {"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCLIProvesTheServerBeforeTheToken"},
		},
		{
			Name:     "credproof/entry-without-key",
			Why:      "an entry without a proof key (an older serve's) hands its token to the first connection",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: "return \"\", nil, fmt.Errorf(\"the entry registered for %s cannot be proved (%v): restart that serve\", base, err)", Replace: "tok, _ := readSecretFile(e.TokenFile); return tok, nil, nil"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCLIProvesTheServerBeforeTheToken"},
		},
		{
			Name:     "cmd/procgraph/html-escaped-values",
			Why:      "the CLI's human output shows <, > and & as JSON's HTML escapes, which the display escape turns into \\u005cu003c",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: "enc.SetEscapeHTML(false)\n\tif err := enc.Encode(v); err != nil {", Replace: "if err := enc.Encode(v); err != nil {"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCLIShowsMarkupAsItIs"},
		},
	}...)
}
