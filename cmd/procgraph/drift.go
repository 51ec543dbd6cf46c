package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"

	"github.com/procgraph/procgraph/procedures"
)

// cmdDrift lists the stale versions (GET /v1/drift).
func cmdDrift(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("drift", "drift [--limit N] [--offset N] [--json]",
		"The stale versions: a tool they call changed its contract (input or output schema, read_only, external_access, or was removed) since they last worked; current versions first. procgraph accept-drift NAME CODE_HASH accepts one.", true)
	limit := cl.fs.Int("limit", 100, "how many (1–500)")
	offset := cl.fs.Int("offset", 0, "page start")
	_, code, done := cl.parse(args, 0, 0, s)
	if done {
		return code
	}
	q := url.Values{"limit": {strconv.Itoa(*limit)}, "offset": {strconv.Itoa(*offset)}}
	var out procedures.DriftPage
	return newClient(ctx).call(ctx, cl, s, "GET", "/v1/drift", q, nil, &out, func(w io.Writer) {
		var rows [][]string
		for _, v := range out.Versions {
			cur := ""
			if v.Current {
				cur = "*"
			}
			rows = append(rows, []string{cur, v.Procedure, v.CodeHash, driftText(v.Drift)})
		}
		table(w, "CURRENT\tPROCEDURE\tCODE HASH\tDRIFT", rows)
		fmt.Fprintf(w, "%d stale version(s)\n", out.Total)
	})
}

// driftText is a drift list as one line: tool: change, ….
func driftText(ds []procedures.Drift) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.Tool + ": " + d.Change
	}
	return strings.Join(parts, ", ")
}

// cmdAcceptDrift accepts a stale version's drift (POST …/accept-drift).
func cmdAcceptDrift(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("accept-drift", "accept-drift NAME CODE_HASH [--reason R] [--json]",
		"Accept a stale version's drift: it takes the tools' current contracts as its baseline (audited, kind drift; needs the grant scope). Grants stay bound to the contracts they were given under: grant again to re-activate one.", true)
	reason := cl.fs.String("reason", "", "why (kept in the audit log)")
	pos, code, done := cl.parse(args, 2, 2, s)
	if done {
		return code
	}
	var out decisionAnswer
	path := "/v1/procedures/" + pathSegment(pos[0]) + "/versions/" + pathSegment(pos[1]) + "/accept-drift"
	return newClient(ctx).call(ctx, cl, s, "POST", path, nil, map[string]any{"reason": *reason}, &out, func(w io.Writer) { out.print(w) })
}
