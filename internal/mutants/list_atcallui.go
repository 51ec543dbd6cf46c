package main

// The mutants of the review at the call's surfaces: the CLI (approvals
// show, approve), the console's approvals page and MCP's run_code.
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "atcallui/cli-call-arguments-raw",
			Why:      "approvals show prints a paused call's arguments as the run evaluated them, raw: a tool's answer the program passed on rewrites the operator's terminal",
			Edits:    []Edit{{Dir: "cmd/procgraph", Files: "callreview.go", Find: "return ptext.VisibleJSONLine([]byte(compactJSON(v)))", Replace: "return compactJSON(v)"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestPausedCallShown", "TestCallReviewInATerminal"},
		},
		{
			Name:     "atcallui/cli-read-answer-raw",
			Why:      "approvals show prints a read's answer as the server sent it: hidden characters a tool wrote reach the terminal raw",
			Edits:    []Edit{{Dir: "cmd/procgraph", Files: "callreview.go", Find: "resp := ptext.VisibleJSONLine([]byte(r.Response))", Replace: "resp := r.Response"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestPausedCallShown"},
		},
		{
			Name:     "atcallui/cli-answer-unbound-to-call",
			Why:      "approvals approve sends no call: an answer read at one pause answers the next one, whose arguments the operator never saw",
			Edits:    []Edit{{Dir: "cmd/procgraph", Files: "callreview.go", Find: `body["call"] = map[string]any{"position": a.Call.Position, "args_digest": digest}`, Replace: `_ = digest`}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCallReviewInATerminal"},
		},
		{
			Name: "atcallui/console-call-arguments-as-html",
			Why:  "the console builds a paused call's arguments as HTML: an argument the program read from a tool injects elements and script into the operator's page",
			Edits: []Edit{{Dir: "ui/static/pages", Files: "approvals.js", Find: "h('pre', { class: 'code call-arguments' }, JSON.stringify(c.arguments, null, 2))",
				Replace: "Object.assign(document.createElement('pre'), { className: 'code call-arguments', innerHTML: JSON.stringify(c.arguments, null, 2) })"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCallReviewInTheConsole"},
		},
		{
			Name: "atcallui/console-read-arguments-as-html",
			Why:  "the console builds a read's arguments as HTML: a value the program read from one tool and passed to another injects elements and script into the operator's page",
			Edits: []Edit{{Dir: "ui/static/pages", Files: "approvals.js", Find: "h('code', { class: 'read-arguments' }, JSON.stringify(r.arguments))",
				Replace: "Object.assign(document.createElement('code'), { className: 'read-arguments', innerHTML: JSON.stringify(r.arguments) })"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCallReviewInTheConsole"},
		},
		{
			Name:     "atcallui/mcp-review-parameter-ignored",
			Why:      "run_code drops its review parameter: a turn asked at_call is reviewed as a block, before its reads ran, without the call's real arguments",
			Edits:    []Edit{{Dir: "mcpserve", Files: "turns.go", Find: "Review: gate.Review(a.Review)", Replace: "Review: gate.ReviewBlock"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestMCPInteropReviewAtCall/python-elicitation"},
		},
		{
			Name:     "atcallui/mcp-review-without-grant",
			Why:      "run_code asks any client that can elicit to review: a paused call's arguments and the reads' answers reach a caller without the grant scope, who approves its own call",
			Edits:    []Edit{{Dir: "mcpserve", Files: "turns.go", Find: "if c.has(auth.ScopeGrant) && canElicit(req) {", Replace: "if canElicit(req) {"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestMCPInteropReviewAtCall/python-elicitation"},
		},
		{
			Name:     "atcallui/mcp-answer-unbound-to-call",
			Why:      "an MCP client's answer resolves the turn without naming its call: an approval given to one call, answered after the run paused at the next, runs that next call, whose arguments the client never saw",
			Edits:    []Edit{{Dir: "mcpserve", Files: "turns.go", Find: "HasGrant: true, Call: call})", Replace: "HasGrant: true, Call: nil})"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestMCPInteropReviewAtCallStale"},
		},
		{
			Name:     "atcallui/mcp-next-call-not-asked",
			Why:      "at 2026-07-28 a resumed run that paused at its next call answers pending instead of asking for that call: the client's review stops after the first call",
			Edits:    []Edit{{Dir: "mcpserve", Files: "turns.go", Find: "return h.askReview(ctx, c, args, claim.Turn, claim.Suggestion)", Replace: "return pendingResult(ans.Turn, claim.Suggestion)"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestMCPInteropReviewAtCall/python-input-required"},
		},
	}...)
}
