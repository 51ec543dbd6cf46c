package main

// The mutants of a capture's analyses kept by the very code
// (procedures/captureanalyses.go, ADR 0061): a kept canonical hash
// served under another catalogue, another dialect's analysis served, a
// capture's canonical program printed without its parameters renamed,
// and flows kept for a version the capture did not analyse.
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "capcpu/canonical-kept-across-catalogues",
			Why:      "a capture's canonical hash kept under one catalogue is served under another: a version is keyed by a program whose reads that catalogue no longer reorders",
			Edits:    []Edit{{Dir: "procedures", Files: "captureanalyses.go", Find: `if k := ca.kept; k != nil && revision != "" && k.revision == revision {`, Replace: `if k := ca.kept; k != nil && k.canonical != "" {`}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestCaptureAnalysesKept"},
		},
		{
			Name:     "capcpu/analysis-kept-across-dialects",
			Why:      "an analysis kept for code in one dialect is served for the same text in another",
			Edits:    []Edit{{Dir: "procedures", Files: "captureanalyses.go", Find: `return string(dialect) + "\x00" + code`, Replace: `return code`}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestCaptureAnalysesKept"},
		},
		{
			Name:     "capcpu/plan-canonical-not-renamed",
			Why:      "the canonical program made from a capture's own analysis keeps its parameters' names: a block that differs only in them is another version",
			Edits:    []Edit{{Dir: "signature", Files: "lift.go", Find: "return canonicalPrint(p.file, p.a, readOnly, true)", Replace: "return canonicalPrint(p.file, p.a, readOnly, false)"}},
			Packages: []string{"./signature", "./procedures"},
			Tests:    []string{"TestLiftPlanCanonicalParams", "TestCaptureCanonicalHash"},
		},
		{
			Name:     "capcpu/lifted-canonical-of-code-as-sent",
			Why:      "a lifted capture's canonical hash is the code as sent's, not the stored (lifted) code's",
			Edits:    []Edit{{Dir: "procedures", Files: "capture.go", Find: "\tif len(p.lifted) > 0 {\n\t\tcanonical, err = CanonicalHashOf(", Replace: "\tif false && len(p.lifted) > 0 {\n\t\tcanonical, err = CanonicalHashOf("}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestCaptureCanonicalHash"},
		},
		{
			Name:     "capcpu/flows-kept-of-code-as-sent",
			Why:      "a lifted capture keeps the flows of its code as sent for its stored (lifted) code: the lifted parameters' types are missing from its decoration",
			Edits:    []Edit{{Dir: "procedures", Files: "capture.go", Find: "s.flows.add(prep.in.Version.CodeHash, prep.in.Version.Code, prep.a)", Replace: "s.flows.add(prep.in.Version.CodeHash, prep.in.Version.Code, ca.a)"}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestCaptureKeepsItsFlows"},
		},
	}...)
}
