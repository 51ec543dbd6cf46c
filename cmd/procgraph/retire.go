package main

import (
	"context"
	"io"
)

func cmdRetire(ctx context.Context, args []string, s stdio) int {
	return retire(ctx, args, s, true)
}

func cmdUnretire(ctx context.Context, args []string, s stdio) int {
	return retire(ctx, args, s, false)
}

// retire retires a procedure (PUT /v1/procedures/{name}/retirement: hidden
// from planners, invokes refused, kept for analysis) or brings it back
// (DELETE). Needs the admin scope.
func retire(ctx context.Context, args []string, s stdio, retired bool) int {
	cl := newCmdline("retire", "retire NAME --reason R [--json]",
		"Retire a procedure: planners no longer see it and an invoke is denied (reason retired); it stays listed, with who retired it and why. Needs the admin scope; procgraph unretire brings it back.", true)
	if !retired {
		cl = newCmdline("unretire", "unretire NAME [--reason R] [--json]", "Bring a retired procedure back (DELETE /v1/procedures/{name}/retirement). Needs the admin scope.", true)
	}
	reason := cl.fs.String("reason", "", "why (kept in the audit log; required to retire)")
	pos, code, done := cl.parse(args, 1, 1, s)
	if done {
		return code
	}
	path := "/v1/procedures/" + pathSegment(pos[0]) + "/retirement"
	method := "DELETE"
	if retired {
		method = "PUT"
	}
	var out decisionAnswer
	return newClient(ctx).call(ctx, cl, s, method, path, nil, map[string]any{"reason": *reason}, &out, func(w io.Writer) { out.print(w) })
}
