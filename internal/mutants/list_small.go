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
	}...)
}
