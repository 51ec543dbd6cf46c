package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
)

// cmdRun replays a procedure file through the real sandbox (a worker
// process) against an upstream, without a server or store, and prints the
// outcome: how an author debugs a procedure.
func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	toolsFile := fs.String("tools", "", "catalogue file (required: without it every tool is unknown and nothing may run)")
	upstream := fs.String("upstream-http", "", "where tool calls go (required)")
	phase := fs.String("phase", "", "automatic or interactive (required)")
	dialect := fs.String("dialect", "", "starlark or python-async (default: python-async for .py files)")
	allowMutating := fs.Bool("allow-mutating", false, "let state-changing tools run (interactive phase; you count as the reviewer)")
	var argv repeated
	fs.Var(&argv, "arg", "k=v argument; v is read as JSON when it parses, else as a string (repeatable)")
	pos, err := parseInterleaved(fs, args)
	if err != nil || len(pos) != 1 || *toolsFile == "" || *upstream == "" || *phase == "" {
		fmt.Fprintln(stderr, "usage: procgraph run --tools F --upstream-http URL --phase automatic|interactive [--dialect D] [--allow-mutating] [--arg k=v]... FILE")
		return 2
	}
	code, err := readSource(pos[0], nil)
	if err != nil {
		return fail(stderr, "run", err)
	}
	cat, err := loadCatalogueFile(*toolsFile)
	if err != nil {
		return fail(stderr, "run", err)
	}
	arguments, err := parseArgs(argv)
	if err != nil {
		fmt.Fprintf(stderr, "procgraph run: %v\n", err)
		return 2
	}
	d, err := replay.NewHTTPDispatcher(*upstream, replay.HTTPOptions{})
	if err != nil {
		return fail(stderr, "run", err)
	}
	if *dialect == "" {
		*dialect = "starlark"
		if strings.HasSuffix(pos[0], ".py") {
			*dialect = "python-async"
		}
	}
	pool, err := sandbox.NewPool(sandbox.PoolConfig{Size: 1})
	if err != nil {
		return fail(stderr, "run", err)
	}
	defer pool.Close()
	res, err := replay.RunFile(ctx, replay.RunFileRequest{
		Code: code, Dialect: *dialect, Catalogue: cat, Phase: procedures.Phase(*phase), Arguments: arguments,
		AllowMutating: *allowMutating, Runner: pool, Dispatcher: d,
	})
	if err != nil {
		var msg strings.Builder
		msg.WriteString(procedures.ErrorMessage(err))
		if pe, ok := err.(*procedures.Error); ok {
			if l, ok := pe.Details["line"]; ok {
				fmt.Fprintf(&msg, " (line %v, column %v, feature %v)", l, pe.Details["column"], pe.Details["feature"])
			}
			if dd, ok := pe.Details["decision"].(procedures.Decision); ok {
				fmt.Fprintf(&msg, " (decision: %s)", dd.Reason)
			}
		}
		fmt.Fprintf(stderr, "procgraph run: %s: %s\n", procedures.ErrorCode(err), msg.String())
		return 1
	}
	printJSON(stdout, stderr, res)
	if res.Status != replay.StatusSucceeded {
		return 1
	}
	return 0
}
