package main

// The one schema source for requests (issue 22 item 4, ADR 0018).
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "procedures/capture-session-id-unchecked",
			Why:      "a capture takes a session_id with control characters that turns refuse (one session_id rule)",
			Edits:    []Edit{{Dir: "procedures", Files: "capture.go", Find: "if err := usage.CheckSessionID(req.SessionID); err != nil {", Replace: "if err := error(nil); err != nil {"}},
			Packages: []string{"./api"},
			Tests:    []string{"TestSessionIDOneRule"},
		},
		{
			Name:     "replay/invoke-session-id-unchecked",
			Why:      "an invoke takes a session_id with control characters that turns refuse (one session_id rule)",
			Edits:    []Edit{{Dir: "replay", Files: "replayer.go", Find: "if err := usage.CheckSessionID(req.SessionID); err != nil {", Replace: "if err := error(nil); err != nil {"}},
			Packages: []string{"./api"},
			Tests:    []string{"TestSessionIDOneRule"},
		},
		{
			Name:     "api/body-bytes-unchecked",
			Why:      "an HTTP body's strings are bounded only as JSON Schema counts them (characters), not in bytes",
			Edits:    []Edit{{Dir: "api", Find: "if err := requestBodies[schema].Check(doc); err != nil {", Replace: "if err := error(nil); err != nil {"}},
			Packages: []string{"./api"},
			Tests:    []string{"TestBodiesAreBoundedInBytes"},
		},
		{
			Name:     "mcpserve/input-bytes-unchecked",
			Why:      "a fixed MCP tool's arguments are bounded only as JSON Schema counts them (characters), not in bytes",
			Edits:    []Edit{{Dir: "mcpserve", Find: "if err := schema.body.Check(args); err != nil {", Replace: "if err := error(nil); err != nil {"}},
			Packages: []string{"./mcpserve"},
			Tests:    []string{"TestToolInputsBoundedInBytes"},
		},
		{
			Name:     "fields/check-counts-characters",
			Why:      "the Go check of a declared string counts characters where its bound is in bytes",
			Edits:    []Edit{{Dir: "internal/fields", Find: "case f.MaxBytes > 0 && len(s) > f.MaxBytes:", Replace: "case f.MaxBytes > 0 && utf8.RuneCountInString(s) > f.MaxBytes:"}},
			Packages: []string{"./api", "./mcpserve"},
			Tests:    []string{"TestSchemaBoundsAreTheGoBounds", "TestBodiesAreBoundedInBytes", "TestToolInputsBoundedInBytes"},
		},
		{
			Name:     "fields/no-control-unpublished",
			Why:      "the schemas stop publishing the session_id rule's pattern: clients cannot check it",
			Edits:    []Edit{{Dir: "internal/fields", Find: "if f.NoControl {", Replace: "if false {"}},
			Packages: []string{"./api", "./mcpserve"},
			Tests:    []string{"TestOpenAPIGolden", "TestFixedToolsGolden"},
		},
	}...)
}

// nosniff's one home (issue 22: it was set in three layers).
func init() {
	mutants = append(mutants, Mutant{
		Name:     "api/nosniff-dropped",
		Why:      "an answer goes out without X-Content-Type-Options: nosniff (api.Protect is its one home)",
		Edits:    []Edit{{Dir: "api", Files: "protect.go", Find: "\tnoSniff(w)\n", Replace: "\n"}},
		Packages: []string{"./api"},
		Tests:    []string{"TestProtect"},
	})
}
