package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"time"

	"github.com/procgraph/procgraph/api"
	"github.com/procgraph/procgraph/mcpdispatch"
	"github.com/procgraph/procgraph/metrics"
	"github.com/procgraph/procgraph/replay"
)

// upstreamsOf is what the API reports of the upstream servers: g, or none.
func upstreamsOf(g *mcpdispatch.Gateway) api.Upstreams {
	if g == nil {
		return nil
	}
	return g
}

// gatewayCounter counts the replays' upstream calls in the metrics and
// records each server's last failure in the Gateway (GET /v1/upstreams).
type gatewayCounter struct {
	*metrics.Registry
	g *mcpdispatch.Gateway
}

// CountToolCall counts one upstream call (replay.ToolCallCounter).
func (c gatewayCounter) CountToolCall(server, tool, class string, d time.Duration) {
	c.Registry.CountToolCall(server, tool, class, d)
	c.g.NoteCall(server, class)
}

// callCounter is the replays' Counter: reg, and g's record of failures
// when there are upstream servers.
func callCounter(reg *metrics.Registry, g *mcpdispatch.Gateway) replay.ReplayCounter {
	if g == nil {
		return reg
	}
	return gatewayCounter{Registry: reg, g: g}
}

// addUpstreamMetrics reports each upstream server's state at a scrape.
func addUpstreamMetrics(reg *metrics.Registry, g *mcpdispatch.Gateway) error {
	if g == nil {
		return nil
	}
	return reg.AddUpstreams(func() []metrics.UpstreamStats {
		states := g.States()
		out := make([]metrics.UpstreamStats, len(states))
		for i, s := range states {
			out[i] = metrics.UpstreamStats{Server: s.Server, State: s.State}
		}
		return out
	})
}

// The replays' Counter counts their upstream calls, and records RecordingCounter's.
var (
	_ replay.ToolCallCounter  = gatewayCounter{}
	_ replay.RecordingCounter = gatewayCounter{}
)

// cmdUpstreams lists the server's upstream servers (GET /v1/upstreams).
func cmdUpstreams(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("upstreams", "upstreams [--server KEY]... [--state STATE]... [--json]",
		"The upstream MCP servers the server at PROCGRAPH_URL fronts (GET /v1/upstreams, admin scope): each server's key, transport, state (ok, degraded, down, unknown), the MCP revision its session negotiated, its tools in the catalogue and as the server last listed them, and the class of its last failed call. Never addresses, headers, environment values or tokens.", true)
	var servers, states repeated
	cl.fs.Var(&servers, "server", "only this server (its key; repeatable)")
	cl.fs.Var(&states, "state", "only servers in this state: ok, degraded, down or unknown (repeatable)")
	if _, code, done := cl.parse(args, 0, 0, s); done {
		return code
	}
	q := url.Values{}
	q["server"], q["state"] = servers, states
	var out api.UpstreamsAnswer
	return newClient(ctx).call(ctx, cl, s, "GET", "/v1/upstreams", q, nil, &out, func(w io.Writer) {
		printUpstreams(w, out)
	})
}

// printUpstreams prints the servers as a table, then their overall state.
func printUpstreams(w io.Writer, out api.UpstreamsAnswer) {
	rows := make([][]string, 0, len(out.Upstreams))
	for _, u := range out.Upstreams {
		key := u.Server
		if key == "" {
			key = "(unnamed)"
		}
		listed, protocol, lastErr := "-", "-", "-"
		if u.ToolsListed != nil {
			listed = strconv.Itoa(*u.ToolsListed)
		}
		if u.ProtocolVersion != nil {
			protocol = *u.ProtocolVersion
		}
		if u.LastErrorClass != nil {
			lastErr = *u.LastErrorClass
			if u.LastErrorAt != nil {
				lastErr += " at " + u.LastErrorAt.UTC().Format(timeLayout)
			}
		}
		state := u.State
		if u.ConnectionFailures > 0 {
			state += fmt.Sprintf(" (%d failed attempts)", u.ConnectionFailures)
		}
		rows = append(rows, []string{key, u.Transport, state, protocol, strconv.Itoa(u.ToolsInCatalogue), listed, lastErr})
	}
	table(w, "SERVER\tTRANSPORT\tSTATE\tPROTOCOL\tCATALOGUE TOOLS\tLISTED\tLAST ERROR", rows)
	fmt.Fprintf(w, "%d server(s) shown; overall: %s\n", len(out.Upstreams), out.Status)
}
