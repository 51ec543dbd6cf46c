package main

// The mutants of issue 19 item 3 (docs/design.md "What the operator sees is
// what runs"): text an agent or a tool server wrote reaches a person raw.
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "cmd/procgraph/table-cells-raw",
			Why:      "the CLI's tables (approvals list, decisions, causes) print cells raw: a session id's bidi override or a cause's escape sequence acts on the terminal",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: "line[i] = ptext.VisibleLine(c)", Replace: "line[i] = ptext.VisibleLine(c)[:0] + c"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCLIShowsHiddenCharactersInATerminal", "TestCLIOutputVisible"},
		},
		{
			Name:     "cmd/procgraph/key-values-raw",
			Why:      "approvals show prints its key: value fields raw: a summary's cursor moves rewrite the tools and read-only lines above it",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: "pairs[i], paint(ptext.VisibleLine(pairs[i+1]), color))", Replace: "pairs[i], paint(pairs[i+1], color))"}},
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
		{
			Name:     "ui/text-raw",
			Why:      "the console inserts text raw (dom.js): an agent's escape sequences and bidi controls reach the DOM in cards, code views and tables",
			Edits:    []Edit{{Dir: "ui/static", Files: "dom.js", Find: "el.append(c instanceof Node ? c : visible(c));", Replace: "el.append(c instanceof Node ? c : document.createTextNode(String(c)));"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestConsoleVisible"},
		},
		{
			Name:     "ui/graph-label-raw",
			Why:      "the graph explorer draws a cause's or procedure's name raw on the canvas",
			Edits:    []Edit{{Dir: "ui/static/pages", Files: "graph.js", Find: "n.shown = visibleText(n.text, true);", Replace: "n.shown = n.text;"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestConsoleVisible"},
		},
		{
			Name:     "ui/editor-raw",
			Why:      "the approval card's code editor holds the code raw: what the operator edits is not what the card shows",
			Edits:    []Edit{{Dir: "ui/static/pages", Files: "approvals.js", Find: "const edited = editableText(code);", Replace: "const edited = code;"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestConsoleVisible"},
		},
		{
			Name:     "ui/card-without-code-hash",
			Why:      "the approval card does not show the code hash the server computed beside the code",
			Edits:    []Edit{{Dir: "ui/static/pages", Files: "approvals.js", Find: "h('p', { class: 'muted code-hash' }, 'code hash ', codeHash(a.code_hash || '')),", Replace: ""}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestConsoleVisible"},
		},
	}...)
}
