package main

import (
	"context"
	"fmt"
	"net/url"
)

// writeGraphExport writes GET /v1/graph in format (the server renders every
// format; json is printed as --json prints it).
func writeGraphExport(ctx context.Context, cl *cmdline, s stdio, q url.Values, format string) int {
	switch format {
	case "json", "graphml", "dot":
	default:
		fmt.Fprintf(s.err, "procgraph graph: --format must be json, graphml or dot, not %q\n", format)
		return 2
	}
	q.Set("format", format)
	raw, err := newClient(ctx).do(ctx, "GET", "/v1/graph", q, nil, nil)
	if err != nil {
		return failAnswer(cl, s, err)
	}
	if format == "json" {
		printRawJSON(s.out, raw)
		return 0
	}
	_, _ = s.out.Write(raw)
	return 0
}
