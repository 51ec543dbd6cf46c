package main

import (
	"context"
	"fmt"
	"io"
)

// runCLI runs procgraph with args (without the program name) and returns
// the exit code: 0 on success, 1 on failure, 2 on a usage error.
func runCLI(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "help", "-h", "--help":
		if len(args) > 1 && args[0] == "help" {
			// help CMD [SUB] is CMD [SUB] --help.
			return runCLI(ctx, append(args[1:], "--help"), stdin, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return 0
	case "serve":
		return cmdServe(ctx, args[1:], stdout, stderr)
	case "token":
		return cmdToken(args[1:], stdout, stderr)
	case "signature":
		return cmdSignature(args[1:], stdin, stdout, stderr)
	case "run":
		return cmdRun(ctx, args[1:], stdout, stderr)
	}
	if cmd, ok := clientCommands()[args[0]]; ok {
		return cmd(ctx, newClient(), args[1:], stdin, stdout, stderr)
	}
	fmt.Fprintf(stderr, "procgraph: unknown command %q\n\n%s", args[0], usage)
	return 2
}

const usage = `procgraph — a memory of procedures for LLM agents

Service:
  procgraph serve [flags]                 run the HTTP service (see --help)
  procgraph token create --name N --scopes S [--tokens-file F]

Offline:
  procgraph signature [--dialect D] [--tools catalogue.json] FILE|-
  procgraph run --tools F --upstream-http URL --phase P [--dialect D] [--arg k=v]... FILE

Client (PROCGRAPH_URL, PROCGRAPH_TOKEN):
  procgraph procedures list|show ...      find_all_procedures, one procedure
  procgraph capture FILE [--dialect D] [--cause C] [--session S]
  procgraph autorun grant|revoke NAME --reason R
  procgraph versions NAME [CODE_HASH]     one version's code, to review before promoting
  procgraph promote NAME CODE_HASH [--reason R]
  procgraph invoke NAME --phase P [--arg k=v]...
  procgraph tools get | tools put FILE
  procgraph decisions [--procedure P] [--kind K] [--before ID]
Every client command takes --json.
`
