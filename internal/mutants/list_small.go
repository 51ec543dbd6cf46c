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
	}...)
}
