package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/procgraph/procgraph/api"
	"github.com/procgraph/procgraph/internal/buildinfo"
	ptext "github.com/procgraph/procgraph/internal/text"
	"github.com/procgraph/procgraph/mcpdispatch"
)

// doctorServed checks the server answering at c over its API: its store
// (/readyz), auth (whoami with c's token), catalogue (GET /v1/tools), each
// upstream server (GET /v1/upstreams, or /readyz's states when the token
// may not read them), MCP at /mcp and /mcp/interactive, and its version
// against this CLI's.
func doctorServed(ctx context.Context, c *client) []check {
	ctx, cancel := context.WithTimeout(ctx, 4*doctorTimeout)
	defer cancel()
	ready, readyErr := servedReadiness(ctx, c)
	checks := []check{servedStore(ready, readyErr), servedAuth(ctx, c), servedCatalogue(ctx, c)}
	checks = append(checks, servedUpstreams(ctx, c, ready)...)
	version := ""
	for _, path := range []string{"/mcp", "/mcp/interactive"} {
		ch, v := doctorMCP(ctx, c, path)
		checks = append(checks, ch)
		if version == "" {
			version = v
		}
	}
	checks = append(checks, servedVersion(version))
	// What the server answered is shown as text, never acted on by a
	// terminal (a holder's name, a failure class, an error's message).
	for i := range checks {
		checks[i].Detail = ptext.VisibleLine(checks[i].Detail)
	}
	return checks
}

// servedReadiness reads /readyz, whatever its status.
func servedReadiness(ctx context.Context, c *client) (api.Readiness, error) {
	var out api.Readiness
	_, err := c.do(ctx, "GET", "/readyz", nil, nil, &out)
	if ae, ok := errors.AsType[*apiError](err); ok && ae.Status == http.StatusServiceUnavailable {
		if json.Unmarshal(ae.Body, &out) == nil && out.Store != "" {
			return out, nil
		}
	}
	return out, err
}

// servedStore is the store check of a running server: whether its store
// answers.
func servedStore(ready api.Readiness, err error) check {
	switch {
	case err != nil:
		return check{"store", checkFail, "GET /readyz: " + err.Error()}
	case ready.Store != "ok":
		return check{"store", checkFail, "the server's store does not answer (/readyz: " + ready.Store + "): every request that reads it fails"}
	}
	return check{"store", checkOK, "the server's store answers (/readyz)"}
}

// servedAuth says whose token c sends, and with which scopes, or that the
// server runs without auth.
func servedAuth(ctx context.Context, c *client) check {
	var me api.WhoAmI
	if _, err := c.do(ctx, "GET", "/v1/whoami", nil, nil, &me); err != nil {
		hint := ""
		if c.token == "" {
			hint = " (no token: set PROCGRAPH_TOKEN)"
		}
		return check{"auth", checkFail, "GET /v1/whoami: " + err.Error() + hint}
	}
	if me.Name == "anonymous" && len(me.Scopes) == 5 {
		return check{"auth", checkWarn, "the server runs with auth off: every caller on its machine is anonymous with every scope; loopback only"}
	}
	return check{"auth", checkOK, fmt.Sprintf("auth is on: the token is %s's, with %s", me.Name, strings.Join(me.Scopes, ", "))}
}

// servedCatalogue reads the server's catalogue.
func servedCatalogue(ctx context.Context, c *client) check {
	var out catalogueAnswer
	if _, err := c.do(ctx, "GET", "/v1/tools", nil, nil, &out); err != nil {
		return check{"catalogue", checkFail, "GET /v1/tools: " + err.Error()}
	}
	if len(out.Tools) == 0 {
		return check{"catalogue", checkWarn, "the server's catalogue is empty: every tool is unknown, and no code runs (procgraph tools put FILE)"}
	}
	return check{"catalogue", checkOK, fmt.Sprintf("the server's: %d tools, revision %s", len(out.Tools), out.Revision)}
}

// servedUpstreams checks each upstream server of the running server: one
// line each. Without the admin scope it has only /readyz's states.
func servedUpstreams(ctx context.Context, c *client, ready api.Readiness) []check {
	var out api.UpstreamsAnswer
	_, err := c.do(ctx, "GET", "/v1/upstreams", nil, nil, &out)
	if ae, ok := errors.AsType[*apiError](err); ok && (ae.Status == http.StatusForbidden || ae.Status == http.StatusUnauthorized) {
		if len(ready.Upstreams) == 0 {
			return []check{{"upstream", checkWarn, "the token may not read GET /v1/upstreams (admin scope), and /readyz names no upstream server"}}
		}
		var checks []check
		for _, u := range ready.Upstreams {
			checks = append(checks, check{"upstream", stateCheck(u.State), fmt.Sprintf("%s: %s (from /readyz; GET /v1/upstreams needs the admin scope for more)", serverName(u.Server), u.State)})
		}
		return checks
	}
	if err != nil {
		return []check{{"upstream", checkFail, "GET /v1/upstreams: " + err.Error()}}
	}
	if len(out.Upstreams) == 0 {
		return []check{{"upstream", checkWarn, "the server has no upstream (--upstream-http, --upstream-mcp, --upstream-mcp-command or --upstreams): replays that call a tool fail"}}
	}
	checks := make([]check, 0, len(out.Upstreams))
	for _, u := range out.Upstreams {
		checks = append(checks, upstreamCheck(u))
	}
	return checks
}

// upstreamCheck is one upstream server's line: down fails (its calls fail
// at once), degraded warns, and so does a catalogue that does not route to
// it as many tools as it lists.
func upstreamCheck(u mcpdispatch.ServerStatus) check {
	name := serverName(u.Server)
	last := ""
	if u.LastErrorClass != nil {
		last = "; last failed call: " + *u.LastErrorClass
		if u.LastErrorAt != nil {
			last += " at " + u.LastErrorAt.UTC().Format(timeLayout)
		}
	}
	switch u.State {
	case mcpdispatch.StateDown:
		return check{"upstream", checkFail, fmt.Sprintf("%s: down after %d failed connection attempts, its calls fail at once%s", name, u.ConnectionFailures, last)}
	case mcpdispatch.StateUnknown:
		return check{"upstream", checkOK, fmt.Sprintf("%s: %s, no session to watch (its calls say whether it answers), %d tools in the catalogue%s", name, u.Transport, u.ToolsInCatalogue, last)}
	}
	detail := fmt.Sprintf("%s: %s, %s", name, u.State, u.Transport)
	if u.ProtocolVersion != nil {
		detail += ", MCP " + *u.ProtocolVersion
	}
	detail += fmt.Sprintf(", %d tools in the catalogue", u.ToolsInCatalogue)
	status := stateCheck(u.State)
	if u.ToolsListed != nil {
		detail += fmt.Sprintf(", %d listed", *u.ToolsListed)
		if *u.ToolsListed != u.ToolsInCatalogue {
			status = checkWarn
			detail += " (the catalogue and the server differ: procgraph tools import --upstreams FILE, then tools put)"
		}
	}
	if u.State == mcpdispatch.StateDegraded {
		detail += " (calls are timing out, or it is connecting)"
	}
	return check{"upstream", status, detail + last}
}

// stateCheck is the outcome of an upstream server's state.
func stateCheck(state string) string {
	switch state {
	case mcpdispatch.StateOK, mcpdispatch.StateUnknown:
		return checkOK
	case mcpdispatch.StateDown:
		return checkFail
	}
	return checkWarn
}

// serverName is how a person reads a server's key.
func serverName(key string) string {
	if key == "" {
		return "(unnamed)"
	}
	return key
}

// servedVersion compares the server's version (MCP serverInfo) with this
// CLI's.
func servedVersion(server string) check {
	mine := buildinfo.Version()
	switch server {
	case "":
		return check{"version", checkWarn, "unknown: MCP did not answer (this CLI is " + mine + ")"}
	case mine:
		return check{"version", checkOK, "the server runs procgraph " + server + ", as this CLI"}
	}
	return check{"version", checkWarn, fmt.Sprintf("the server runs procgraph %s, this CLI is %s", server, mine)}
}
