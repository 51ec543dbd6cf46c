package main

// The mutants of issue 19 item 5 (scopes and bounds on every path).
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "e2e/turn-capture-without-capture-scope",
			Why:      "a turn's capture is honoured for an invoke-only token: it creates an exposed procedure with planner-visible text",
			Edits:    []Edit{{Dir: "replay", Find: "if req.Capture != nil && !req.MayCapture {", Replace: "if false {"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestTurnCaptureNeedsCaptureScope"},
		},
	}...)
}
