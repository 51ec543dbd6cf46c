package main

// The mutants of the review at the call in the gate, the stores and the
// HTTP API (docs/design.md "Review at the call"; ADR 0053): a resume
// claimed once per pause, an answer bound to its call, the reads shown
// only to the grant scope and escaped, the audit holding digests only, a
// paused turn never imported pending.
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "atcallgate/stale-claim-embedded",
			Why:      "the embedded store claims a turn read approved at an earlier pause: a second instance resumes that pause again and dispatches its call twice",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "approvals.go", Find: "\t\tif err := gate.CheckPause(cur, next); err != nil {\n\t\t\treturn err\n\t\t}\n", Replace: ""}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore/Turns/a_resume_at_the_call_is_claimed_once_per_pause"},
		},
		{
			Name:     "atcallgate/stale-finish-embedded",
			Why:      "the embedded store finishes a turn from a read of an earlier pause: a stale run ends a turn paused again since",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "approvals.go", Find: "\t\t\terr = gate.CheckPause(cur, next)\n", Replace: "\t\t\terr = nil\n"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore/Turns/a_resume_at_the_call_is_claimed_once_per_pause"},
		},
		{
			Name:     "atcallgate/stale-claim-neo4j",
			Why:      "the Neo4j store claims a turn read approved at an earlier pause: two instances on one database dispatch one call twice",
			Edits:    []Edit{{Dir: "graph/neo4j", Files: "approvals.go", Find: "\t\tif err := gate.CheckPause(cur, next); err != nil {\n\t\t\treturn nil, err\n\t\t}\n", Replace: ""}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestStore/Turns/a_resume_at_the_call_is_claimed_once_per_pause"},
			Neo4j:    true,
		},
		{
			Name:     "atcallgate/pause-unchecked",
			Why:      "the rule both stores compare turns by lets any pause through: the status alone decides a claim",
			Edits:    []Edit{{Dir: "gate", Files: "turnstore.go", Find: "\tif next.Pauses == cur.Pauses || ", Replace: "\tif true || "}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore/Turns/a_resume_at_the_call_is_claimed_once_per_pause"},
		},
		{
			Name:     "atcallgate/approved-runs-whole-block",
			Why:      "an approval at a call runs the whole block afresh: its reads are sent again and every later state-changing call runs unseen",
			Edits:    []Edit{{Dir: "gate", Files: "resolve.go", Find: "\tif cur.Pause != nil {\n\t\treturn g.resume(", Replace: "\tif false {\n\t\treturn g.resume("}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestAtCallEmbedded"},
		},
		{
			Name:     "atcallgate/run-once-runs-all",
			Why:      "run_once at a call approves every later state-changing call of the run: the second kill is never shown",
			Edits:    []Edit{{Dir: "gate", Files: "atcall.go", Find: "a := cur.Pause.Approval(r.Choice == ChoiceRunAll || r.Choice == ChoiceAutoRun)", Replace: "a := cur.Pause.Approval(r != nil)"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestAtCallEmbedded"},
		},
		{
			Name:     "atcallgate/stale-answer",
			Why:      "an answer read at one pause answers the next: the operator approves a call they never saw",
			Edits:    []Edit{{Dir: "gate", Files: "atcall.go", Find: "(cur.Pause == nil || c.Position != cur.Pause.Position || c.ArgsDigest != cur.Pause.ArgsDigest)", Replace: "(cur.Pause == nil)"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestAtCallEmbedded"},
		},
		{
			Name:     "atcallgate/diverged-not-denied",
			Why:      "a diverged resume leaves the turn failed, not denied: the refusal is not recorded as one",
			Edits:    []Edit{{Dir: "gate", Files: "atcall.go", Find: "\t\tnext.Status = TurnDenied\n", Replace: ""}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestAtCallEmbedded"},
		},
		{
			Name:     "atcallgate/reads-without-grant",
			Why:      "the call's arguments and the reads' answers (tool output) are shown to a caller without the grant scope",
			Edits:    []Edit{{Dir: "gate", Files: "resolve.go", Find: "\t\tif showArgs && r.Pause != nil {\n", Replace: "\t\tif r.Pause != nil {\n"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestAtCallScopesWaitsAndAudit"},
		},
		{
			Name:     "atcallgate/reads-unescaped",
			Why:      "a read's answer reaches the review with its bidirectional controls raw: what the operator sees is not what the tool said",
			Edits:    []Edit{{Dir: "gate", Files: "atcall.go", Find: "v := string(text.VisibleJSON(c.Response))", Replace: "v := string(c.Response)\n\t\t_ = text.VisibleJSON"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestAtCallEmbedded"},
		},
		{
			Name:     "atcallgate/audit-argument-values",
			Why:      "the audit names a call by its argument values instead of their digest",
			Edits:    []Edit{{Dir: "gate", Files: "atcall.go", Find: "p.Position, p.Tool, p.SchemaHash, p.ArgsDigest)", Replace: "p.Position, p.Tool, p.SchemaHash, fmt.Sprint(p.ArgsDigest, p.Arguments))"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestAtCallScopesWaitsAndAudit"},
		},
		{
			Name:     "atcallgate/pause-unaudited",
			Why:      "a turn's first pause leaves no audit record",
			Edits:    []Edit{{Dir: "gate", Files: "gate.go", Find: "\tif rec.Pause != nil {\n\t\tif _, err := g.r.Record(", Replace: "\tif false {\n\t\tif _, err := g.r.Record("}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestAtCallScopesWaitsAndAudit"},
		},
		{
			Name:     "atcallgate/dispatch-unaudited",
			Why:      "the state-changing calls a resume dispatched (the later ones of a run_all among them) leave no audit record",
			Edits:    []Edit{{Dir: "gate", Files: "atcall.go", Find: "\tg.recordDispatched(ctx, running.Turn, b, res)\n", Replace: ""}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestAtCallScopesWaitsAndAudit"},
		},
		{
			Name:     "atcallgate/mcp-run-paused-again",
			Why:      "an MCP await_approval whose resume paused again reads a run that never happened (a nil result): the request panics",
			Edits:    []Edit{{Dir: "mcpserve", Files: "turns.go", Find: "\tif !ans.Ran() {\n\t\t// A turn reviewed at the call", Replace: "\tif false {\n\t\t// A turn reviewed at the call"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestAtCallOverMCPAwait"},
		},
		{
			Name:     "atcallgate/paused-turn-imported-pending",
			Why:      "a dump's turn paused at a call arrives pending with its pause: answers the target's tools never gave are shown and resumed from",
			Edits:    []Edit{{Dir: "dump", Files: "admit.go", Find: "\t\t\tif t.Pause != nil || t.Call != nil {\n", Replace: "\t\t\tif false {\n"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestDumpPausedTurn"},
		},
	}...)
}
