package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	ptext "github.com/procgraph/procgraph/internal/text"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
)

// cmdRun replays a procedure file through the real sandbox (a worker
// process) against an upstream, without a server or store, and prints the
// outcome: how an author debugs a procedure.
func cmdRun(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("run", "run --tools F --upstream-http URL --phase automatic|interactive [flags] FILE",
		"Replay a procedure file through the sandbox against an upstream tool server, without a server or store. Exit 1 when it is refused or fails.", true)
	toolsFile := cl.fs.String("tools", "", "catalogue file (required: without it every tool is unknown and nothing may run)")
	upstream := cl.fs.String("upstream-http", "", "where tool calls go (required)")
	phase := cl.enum("phase", "", "required", phases...)
	dialect := cl.enum("dialect", "", dialectUsage, dialectValues...)
	allowMutating := cl.fs.Bool("allow-mutating", false, "let state-changing tools run (interactive phase; you count as the reviewer)")
	var argv repeated
	cl.fs.Var(&argv, "arg", argUsage)
	pos, code, done := cl.parse(args, 1, 1, s)
	if done {
		return code
	}
	if *toolsFile == "" || *upstream == "" || *phase == "" {
		return cl.fail(s, "--tools, --upstream-http and --phase are required")
	}
	src, err := readSource(pos[0], nil)
	if err != nil {
		return fail(s.err, "run", err)
	}
	cat, err := loadCatalogueFile(*toolsFile)
	if err != nil {
		return fail(s.err, "run", err)
	}
	arguments, err := parseArgs(argv)
	if err != nil {
		return cl.fail(s, err.Error())
	}
	d, err := replay.NewHTTPDispatcher(*upstream, replay.HTTPOptions{})
	if err != nil {
		return fail(s.err, "run", err)
	}
	pool, err := sandbox.NewPool(sandbox.PoolConfig{Size: 1})
	if err != nil {
		return fail(s.err, "run", err)
	}
	defer pool.Close()
	res, err := replay.RunFile(ctx, replay.RunFileRequest{
		Code: src, Dialect: dialectFor(pos[0], *dialect), Catalogue: cat, Phase: audit.Phase(*phase), Arguments: arguments,
		AllowMutating: *allowMutating, Runner: pool, Dispatcher: d,
	})
	if err != nil {
		fmt.Fprintf(s.err, "procgraph run: %s\n", ptext.Visible(runError(err)))
		return 1
	}
	if cl.asJSON() {
		printJSON(s.out, res)
	} else {
		printReplay(s.out, res)
	}
	if res.Status != replay.StatusSucceeded {
		return 1
	}
	return 0
}

// runError is a refused run's message: the code, the message, where in the
// code, and for a denial its reason and what to do instead.
func runError(err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", fault.ErrorCode(err), fault.ErrorMessage(err))
	pe, ok := err.(*fault.Error)
	if !ok {
		return b.String()
	}
	if l, ok := pe.Details["line"]; ok {
		fmt.Fprintf(&b, "\n  at: line %v, column %v, feature %v", l, pe.Details["column"], pe.Details["feature"])
	}
	d, ok := audit.DecisionOf(pe)
	if !ok {
		return b.String()
	}
	fmt.Fprintf(&b, "\n  decision: %s", d.Reason)
	switch {
	case d.Suggestion != "":
		fmt.Fprintf(&b, "\n  suggestion: %s", d.Suggestion)
	case d.Reason == audit.ReasonStateChangingDisabled:
		b.WriteString("\n  suggestion: this file changes state; to run it here, review it and add --allow-mutating (you count as the reviewer)")
	}
	return b.String()
}
