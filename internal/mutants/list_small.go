package main

// The mutants of issue 35 item 9's smaller ones: what MCP lists, the
// Idempotency-Key rule, tool-error text and the session of turn decisions.
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "mcpserve/tools-list-unfiltered",
			Why:      "tools/list offers every tool to every token: the agent token is listed set_procedure_auto_run, which it cannot call",
			Edits:    []Edit{{Dir: "mcpserve", Find: "if c.mayCall(t.Name) == nil {", Replace: "if true || c.mayCall(t.Name) == nil {"}},
			Packages: []string{"./mcpserve", "./cmd/procgraph"},
			Tests:    []string{"TestAuth", "TestMCPListsOnlyWhatTheCallerMayCall"},
		},
		{
			Name:     "fields/idempotency-key-controls",
			Why:      "the Idempotency-Key header, a usage key the stores build keys from, takes a tab or a C1 control (only its length was checked)",
			Edits:    []Edit{{Dir: "internal/fields", Find: `IdempotencyKey = Field{Name: "Idempotency-Key", Type: String, MaxBytes: MaxKeyBytes, NoControl: true}`, Replace: `IdempotencyKey = Field{Name: "Idempotency-Key", Type: String, MaxBytes: MaxKeyBytes}`}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestIdempotencyKeyOneRule"},
		},
		{
			Name:     "mcpserve/tool-error-text-raw",
			Why:      "an MCP tool error's text quotes an upstream's failure raw: its ESC, CR and bidi characters rewrite what a person reads in the client",
			Edits:    []Edit{{Dir: "mcpserve", Find: "func errorText(s string) string { return ptext.VisibleLine(s) }", Replace: "func errorText(s string) string { return s + ptext.VisibleLine(\"\") }"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestMCPToolErrorTextVisible"},
		},
		{
			Name:     "gate/turn-decision-without-session",
			Why:      "a turn's and an approval's audit records no longer say which agent session they were about",
			Edits:    []Edit{{Dir: "gate", Find: "Phase: t.Phase, Actor: t.RequestedBy, Session: t.SessionID}", Replace: "Phase: t.Phase, Actor: t.RequestedBy}"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestTurnDecisionsCarrySession"},
		},
	}...)
}
