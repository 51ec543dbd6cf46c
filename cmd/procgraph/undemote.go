package main

import (
	"context"
	"io"
)

// cmdUndemote lifts a demoted procedure's demotion (DELETE
// /v1/procedures/{name}/demotion): it is offered to planners again and its
// failure streak starts from 0. Needs the admin scope.
func cmdUndemote(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("undemote", "undemote NAME [--reason R] [--json]",
		"Lift a demoted procedure's demotion (DELETE /v1/procedures/{name}/demotion): planners see it again, an automatic invoke runs, and its failure streak starts from 0; audited as a health decision (reason health_restored). No run lifts a demotion: a verification that passes does, or this. Needs the admin scope.", true)
	reason := cl.fs.String("reason", "", "why (kept in the audit log)")
	pos, code, done := cl.parse(args, 1, 1, s)
	if done {
		return code
	}
	var out decisionAnswer
	return newClient(ctx).call(ctx, cl, s, "DELETE", "/v1/procedures/"+pathSegment(pos[0])+"/demotion", nil,
		map[string]any{"reason": *reason}, &out, func(w io.Writer) { out.print(w) })
}
