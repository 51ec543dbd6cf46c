package main

// The mutants of a review that shows all that runs and says what each
// answer covers (docs/design.md "What the operator sees is what runs",
// "What an answer covers").
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "review/nested-code-omitted",
			Why:      "a review shows no procedure the block reaches: approving a proc__ call runs a kill_job the operator never saw",
			Edits:    []Edit{{Dir: "procedures", Files: "review.go", Find: "if b == nil || len(b.Nested) == 0 {", Replace: "if true {"}},
			Packages: []string{"./gate", "./cmd/procgraph"},
			Tests:    []string{"TestReviewShowsAllThatRuns", "TestReviewOverHTTP", "TestReviewInATerminal", "TestReviewInMCPClient"},
		},
		{
			Name:     "review/deeper-levels-omitted",
			Why:      "a review shows only the procedures the block calls, not the ones they call: the kill two levels down is hidden",
			Edits:    []Edit{{Dir: "procedures", Files: "review.go", Find: "\t\t\t\t\t\tnext[c] = true\n", Replace: "\t\t\t\t\t\t_ = next\n"}},
			Packages: []string{"./gate", "./cmd/procgraph"},
			Tests:    []string{"TestReviewShowsAllThatRuns", "TestReviewOverHTTP"},
		},
		{
			Name: "review/shows-current-not-bound",
			Why:  "a review shows a nested procedure's current version rather than the one its approval binds to: what the operator reads is not what the approval lets run",
			Edits: []Edit{{Dir: "gate", Files: "resolve.go", Find: "nested, err := g.svc.Reach(ctx, r.Binding)",
				Replace: "now, err := g.svc.BindingsNow(ctx, []*binding.Binding{r.Binding})\n\t\tif err != nil {\n\t\t\treturn nil, err\n\t\t}\n\t\tnested, err := g.svc.Reach(ctx, now[0])"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestReviewShowsAllThatRuns"},
		},
		{
			Name:     "review/truncation-silent",
			Why:      "nested code too long for a review is cut without saying so: the operator reads a prefix as the whole",
			Edits:    []Edit{{Dir: "procedures", Files: "review.go", Find: "return code[:n], true", Replace: "return code[:n], false"}},
			Packages: []string{"./gate", "./cmd/procgraph"},
			Tests:    []string{"TestReviewBoundsNestedCode", "TestReviewBoundsAllNestedCode", "TestReviewOverHTTP"},
		},
		{
			Name:     "review/truncation-not-told-in-text",
			Why:      "the CLI and the MCP review do not say that nested code was cut, nor where the whole of it is",
			Edits:    []Edit{{Dir: "binding", Files: "reached.go", Find: "\tif !r.Truncated {\n\t\treturn \"\"", Replace: "\tif true {\n\t\treturn \"\""}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestReviewInATerminal"},
		},
		{
			Name:     "review/nested-budget-unbounded",
			Why:      "the nested code of one review is bounded per procedure only: a block reaching many long procedures makes a review of any size",
			Edits:    []Edit{{Dir: "procedures", Files: "review.go", Find: "budget -= len(r.Code)", Replace: "_ = budget"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestReviewBoundsAllNestedCode"},
		},
		{
			Name:     "covers/grant-scope-text-missing",
			Why:      "the review does not say that auto_run on a proc__-only block grants auto-run to every caller, with any arguments, until revoked",
			Edits:    []Edit{{Dir: "gate", Files: "covers.go", Find: `g := "auto-run of " + p + " for every caller and any arguments, until revoked"`, Replace: `g := "auto-run of " + p`}},
			Packages: []string{"./gate", "./cmd/procgraph"},
			Tests:    []string{"TestReviewShowsAllThatRuns", "TestReviewOverHTTP", "TestReviewInATerminal", "TestReviewInMCPClient"},
		},
		{
			Name:     "covers/grants-not-named",
			Why:      "an answer that creates durable grants does not name them: the console and the CLI grant without a confirmation",
			Edits:    []Edit{{Dir: "gate", Files: "covers.go", Find: "cv.Grants = append(cv.Grants, s.Procs...)", Replace: "_ = cv"}},
			Packages: []string{"./gate", "./cmd/procgraph"},
			Tests:    []string{"TestReviewShowsAllThatRuns", "TestReviewInATerminal"},
		},
		{
			Name:     "cli/review-nested-omitted",
			Why:      "approvals show prints the block but not the procedures it reaches nor what each answer covers",
			Edits:    []Edit{{Dir: "cmd/procgraph", Files: "turns.go", Find: "\t\tprintReview(w, &a)\n", Replace: "\n"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestReviewInATerminal"},
		},
		{
			Name:     "cli/auto-run-grant-unconfirmed",
			Why:      "approvals approve --choice auto_run grants durable auto-run without --yes or a yes typed at the terminal",
			Edits:    []Edit{{Dir: "cmd/procgraph", Files: "turns.go", Find: "if cover == nil || len(cover.Grants) == 0 {", Replace: "if true {"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestReviewInATerminal"},
		},
		{
			Name:     "console/auto-run-grant-unconfirmed",
			Why:      "the console's Auto-run grants durable auto-run at once, without the confirmation step that says what it grants",
			Edits:    []Edit{{Dir: "ui/static/pages", Files: "approvals.js", Find: "if (!text && (!cover || !(cover.grants || []).length)) { resolve(choice); return; }", Replace: "{ resolve(choice); return; }"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestReviewInTheConsole"},
		},
		{
			Name:     "cli/edited-auto-run-grant-unconfirmed",
			Why:      "approvals approve --choice auto_run --code grants durable auto-run to the edited block's procedures without a confirmation",
			Edits:    []Edit{{Dir: "cmd/procgraph", Files: "turns.go", Find: "\tif edited != nil {\n\t\tcover = editedCover(*edited, &a)\n\t}", Replace: "\t_ = editedCover"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestReviewInATerminal"},
		},
		{
			Name:     "console/edited-auto-run-grant-unconfirmed",
			Why:      "the console's Auto-run of an edited block is sent without the confirmation that it may grant durable auto-run",
			Edits:    []Edit{{Dir: "ui/static/pages", Files: "approvals.js", Find: "const text = cover && cover.if_edited && !editor.hidden", Replace: "const text = false && cover.if_edited && !editor.hidden"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestReviewInTheConsole"},
		},
		{
			Name:     "console/nested-code-omitted",
			Why:      "the console's approval card does not show the procedures the block reaches",
			Edits:    []Edit{{Dir: "ui/static/pages", Files: "approvals.js", Find: "(a.nested || []).map(nestedProcedure),", Replace: "null,"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestReviewInTheConsole"},
		},
		{
			Name:     "mcpserve/review-nested-omitted",
			Why:      "the in-client review shows the block but not the procedures it reaches: the operator approves a kill they never saw",
			Edits:    []Edit{{Dir: "mcpserve", Files: "turns.go", Find: "for _, r := range a.Nested {", Replace: "for _, r := range a.Nested[:0] {"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestReviewInMCPClient/legacy"},
		},
		{
			Name:     "mcpserve/review-arguments-omitted",
			Why:      "the in-client review does not show the arguments that decide what runs",
			Edits:    []Edit{{Dir: "mcpserve", Files: "turns.go", Find: "\tif a.Arguments != nil {\n\t\targs, err := json.Marshal(a.Arguments)", Replace: "\tif false {\n\t\targs, err := json.Marshal(a.Arguments)"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestReviewInMCPClient/modern"},
		},
	}...)
}
