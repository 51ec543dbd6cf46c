package main

func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "replay/analysis-cache-keyed-by-a-prefix",
			Why:      "the analysis cache keys an entry by the first bytes of the code (to bound its memory): a stored version whose code differs from one just run only further on is given that one's analysis, passes the hash check and runs code that is not its own",
			Edits:    []Edit{{Dir: "replay", Files: "analyses.go", Find: `key := dialect + "\x00" + code`, Replace: `key := dialect + "\x00" + code[:min(len(code), 64)]`}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestStoredCodeBesideAnAnalysedTwinDoesNotRun"},
		},
		{
			Name:     "replay/analysis-cache-shares-its-analysis",
			Why:      "the analysis cache hands out the analysis it keeps: a caller that changes it (its signature, its parameters) changes what the next invoke of that code is checked against",
			Edits:    []Edit{{Dir: "signature", Files: "analyze.go", Find: "c := *a\n", Replace: "c := *a\n\treturn a\n"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestAnalysisCacheHandsOutCopies"},
		},
		{
			Name:     "mcpserve/run-code-arguments-through-json",
			Why:      "a tool's arguments are decoded into their struct without json.Number: run_code's free-form arguments make an integer past 2^53 a float64, and the block runs on a number the client did not send",
			Edits:    []Edit{{Dir: "mcpserve", Files: "tools.go", Find: "\tdec.UseNumber()\n", Replace: ""}},
			Packages: []string{"./mcpserve"},
			Tests:    []string{"TestRunCodeArgumentsKeepTheirNumbers"},
		},
	}...)
}
