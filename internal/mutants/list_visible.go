package main

// The mutants of issue 19 item 3 (DESIGN.md "What the operator sees is
// what runs"): text an agent or a tool server wrote reaches a person raw.
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "cmd/procgraph/table-cells-raw",
			Why:      "the CLI's tables (approvals list, decisions, causes) print cells raw: a session id's bidi override or a cause's escape sequence acts on the terminal",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: "cells[i] = ptext.VisibleLine(c)", Replace: "cells[i] = c"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCLIShowsHiddenCharactersInATerminal", "TestCLIOutputVisible"},
		},
		{
			Name:     "cmd/procgraph/key-values-raw",
			Why:      "approvals show prints its key: value fields raw: a summary's cursor moves rewrite the tools and read-only lines above it",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: "pairs[i], ptext.VisibleLine(pairs[i+1]))", Replace: "pairs[i], pairs[i+1])"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCLIShowsHiddenCharactersInATerminal", "TestCLIOutputVisible"},
		},
		{
			Name:     "cmd/procgraph/code-raw",
			Why:      "approvals show, procedures show and versions print the code raw: its escape sequences erase the kill_job line",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: `ptext.Visible(strings.TrimRight(s, "\n"))`, Replace: `strings.TrimRight(s, "\n")`}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCLIShowsHiddenCharactersInATerminal", "TestCLIOutputVisible"},
		},
		{
			Name:     "cmd/procgraph/server-error-raw",
			Why:      "an error answer's message (which may quote a name an agent wrote) is printed raw",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: "return ptext.VisibleLine(fmt.Sprint(x))", Replace: "return fmt.Sprint(x)"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCLIOutputVisible"},
		},
		{
			Name:     "mcpserve/review-code-raw",
			Why:      "the MCP review (elicitation) message embeds the agent's code raw: its escape sequences rewrite what the operator reads",
			Edits:    []Edit{{Dir: "mcpserve", Find: `b.WriteString("\nCode:\n" + ptext.Visible(a.Code))`, Replace: `b.WriteString("\nCode:\n" + a.Code)`}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestMCPReviewVisible"},
		},
		{
			Name:     "mcpserve/review-summary-raw",
			Why:      "the MCP review shows the agent's summary raw",
			Edits:    []Edit{{Dir: "mcpserve", Find: "ptext.VisibleLine(a.Summary)", Replace: "a.Summary"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestMCPReviewVisible"},
		},
		{
			Name:     "mcpserve/review-wrong-classification",
			Why:      "the MCP review says read-only for a block that changes state (the classification is not the server's)",
			Edits:    []Edit{{Dir: "mcpserve", Find: "if a.ReadOnly {", Replace: "if true {"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestMCPReviewVisible"},
		},
	}...)
}
