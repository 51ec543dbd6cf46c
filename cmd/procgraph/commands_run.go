package main

// The client commands that act (invoke, the catalogue) and read the audit
// log and the graph.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/graphview"
	"github.com/procgraph/procgraph/internal/strictjson"
	"github.com/procgraph/procgraph/mcpdispatch"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
)

const argUsage = "k=v argument; v is read as JSON when it parses, else as a string (repeatable)"

func cmdInvoke(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("invoke", "invoke NAME --phase automatic|interactive [flags]", "Replay a procedure on the server (POST /v1/procedures/{name}/invoke). Exit 1 when it is refused or fails.", true)
	phase := cl.fs.String("phase", "", "automatic or interactive (required)")
	var argv repeated
	cl.fs.Var(&argv, "arg", argUsage)
	session := cl.fs.String("session", "", "session id: the usage key")
	cause := cl.fs.String("cause", "", "the cause this replay addresses")
	reviewedBy := cl.fs.String("reviewed-by", "", "the operator who reviewed this call (needs the grant scope)")
	pos, code, done := cl.parse(args, 1, 1, s)
	if done {
		return code
	}
	if *phase == "" {
		return cl.fail(s, "--phase is required")
	}
	arguments, err := parseArgs(argv)
	if err != nil {
		return cl.fail(s, err.Error())
	}
	body := map[string]any{"arguments": arguments, "phase": *phase}
	for k, v := range map[string]string{"session_id": *session, "cause": *cause, "reviewed_by": *reviewedBy} {
		if v != "" {
			body[k] = v
		}
	}
	var out replay.InvokeResult
	if code := newClient(ctx).about(pos[0]).call(ctx, cl, s, "POST", "/v1/procedures/"+pathSegment(pos[0])+"/invoke", nil, body, &out,
		func(w io.Writer) { printReplay(w, &out) }); code != 0 {
		return code
	}
	if out.Status != replay.StatusSucceeded {
		return 1
	}
	return 0
}

// printReplay prints a replay's answer as key: value lines.
func printReplay(w io.Writer, r *replay.InvokeResult) {
	d := r.Decision
	kv := []string{"status", r.Status, "decision", fmt.Sprintf("%s %s (%s)", d.ID, d.Outcome, d.Reason),
		"procedure", d.Procedure, "code hash", d.CodeHash}
	if r.Error != nil {
		e := string(r.Error.Code) + ": " + r.Error.Message
		if r.Error.Tool != "" {
			e += " (tool " + r.Error.Tool + ")"
		}
		kv = append(kv, "error", e)
	} else {
		kv = append(kv, "result", compactJSON(r.Result))
	}
	var calls []string
	for _, c := range r.Calls {
		ok := "ok"
		if !c.OK {
			ok = "failed"
		}
		calls = append(calls, fmt.Sprintf("%s %s %dms", c.Tool, ok, c.DurationMS))
	}
	kv = append(kv, "calls", strings.Join(calls, ", "))
	keyValues(w, kv...)
	if r.Output != "" {
		fmt.Fprint(w, "output:")
		block(w, r.Output)
	}
}

// parseArgs turns k=v pairs into arguments; v is JSON when it parses.
func parseArgs(pairs []string) (map[string]any, error) {
	out := map[string]any{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--arg %q is not k=v", p)
		}
		var j any
		if err := json.Unmarshal([]byte(v), &j); err == nil {
			out[k] = j
		} else {
			out[k] = v
		}
	}
	return out, nil
}

// catalogueAnswer is GET and PUT /v1/tools's answer.
type catalogueAnswer struct {
	Tools    []procedures.Tool `json:"tools"`
	Revision string            `json:"revision"`
}

func (a *catalogueAnswer) print(w io.Writer) {
	routed := false // a catalogue of several servers shows where each tool is called
	for _, t := range a.Tools {
		routed = routed || t.Server != "" || t.UpstreamName != ""
	}
	var rows [][]string
	for _, t := range a.Tools {
		if routed {
			rows = append(rows, []string{t.Name, t.Server, t.WireName(), yesNo(t.ReadOnly), yesNo(t.ExternalAccess), entryOwner(t), t.Description})
		} else {
			rows = append(rows, []string{t.Name, yesNo(t.ReadOnly), yesNo(t.ExternalAccess), t.Description})
		}
	}
	header := "NAME\tREAD-ONLY\tEXTERNAL\tDESCRIPTION"
	if routed {
		header = "NAME\tSERVER\tUPSTREAM NAME\tREAD-ONLY\tEXTERNAL\tOWNER\tDESCRIPTION"
	}
	table(w, header, rows)
	fmt.Fprintf(w, "%d tools, revision %s\n", len(a.Tools), a.Revision)
}

// entryOwner is who a catalogue entry is: "server" while it is as its
// server listed it (the catalogue refresh follows it), else "operator"
// (kept over refreshes: docs/design.md "Drift").
func entryOwner(t procedures.Tool) string {
	if t.FollowsServer() {
		return "server"
	}
	return "operator"
}

func cmdToolsGet(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("tools get", "tools get [--json]", "The tool catalogue (GET /v1/tools).", true)
	if _, code, done := cl.parse(args, 0, 0, s); done {
		return code
	}
	var out catalogueAnswer
	return newClient(ctx).call(ctx, cl, s, "GET", "/v1/tools", nil, nil, &out, func(w io.Writer) { out.print(w) })
}

func cmdToolsPut(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("tools put", "tools put FILE [--json]", "Replace the tool catalogue with FILE's ({\"tools\": [Tool]}; PUT /v1/tools, admin scope).", true)
	pos, code, done := cl.parse(args, 1, 1, s)
	if done {
		return code
	}
	b, err := os.ReadFile(pos[0])
	if err != nil {
		return fail(s.err, "tools put", err)
	}
	var body any
	if err := json.Unmarshal(b, &body); err != nil {
		return fail(s.err, "tools put", fmt.Errorf("%s is not JSON: %v", pos[0], strictjson.Locate(b, err)))
	}
	var out catalogueAnswer
	return newClient(ctx).call(ctx, cl, s, "PUT", "/v1/tools", nil, body, &out, func(w io.Writer) { out.print(w) })
}

// cmdToolsImport builds a catalogue from an MCP server's tools/list (or
// from every server of an upstreams file) for an operator to review and
// put: read_only is taken from a server's readOnlyHint only with
// --trust-annotations (or the file's "trust_annotations": hints are not a
// security boundary), else false. Its output is a catalogue file: JSON
// always.
func cmdToolsImport(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("tools import", "tools import --from-mcp URL|--from-mcp-command \"CMD ARGS\" [--trust-annotations]|--upstreams FILE > catalogue.json",
		"Print a catalogue ({\"tools\": [Tool]}) built from an MCP server's tools/list, or from every server of an upstreams file (a server's tool T is PREFIX__T), to review and then put.", false)
	fromURL := cl.fs.String("from-mcp", "", "streamable HTTP MCP server URL")
	fromCommand := cl.fs.String("from-mcp-command", "", "MCP server command, spoken to over stdio")
	upstreams := cl.fs.String("upstreams", "", "upstreams file (the mcpServers object of serve --upstreams): every server, each tool named PREFIX__T; trust is the file's trust_annotations")
	trust := cl.fs.Bool("trust-annotations", false, "take read_only from the server's readOnlyHint")
	if _, code, done := cl.parse(args, 0, 0, s); done {
		return code
	}
	if *upstreams != "" {
		if *fromURL != "" || *fromCommand != "" || *trust {
			return cl.fail(s, "--upstreams is exclusive with --from-mcp, --from-mcp-command and --trust-annotations (the file sets trust_annotations per server)")
		}
		ups, err := mcpdispatch.ReadUpstreams(*upstreams)
		if err != nil {
			return fail(s.err, "tools import", fmt.Errorf("--upstreams %s: %v", *upstreams, err))
		}
		if err := mcpdispatch.ImportUpstreamsJSON(ctx, s.out, s.err, ups, mcpdispatch.Options{}); err != nil {
			return fail(s.err, "tools import", err)
		}
		return 0
	}
	if (*fromURL == "") == (*fromCommand == "") {
		return cl.fail(s, "give one of --from-mcp, --from-mcp-command and --upstreams")
	}
	src := mcpdispatch.Source{URL: *fromURL}
	if *fromCommand != "" {
		argv, err := mcpdispatch.SplitCommand(*fromCommand)
		if err != nil {
			return cl.fail(s, "--from-mcp-command: "+err.Error())
		}
		src = mcpdispatch.Source{Command: argv}
	}
	if err := mcpdispatch.ImportCatalogueJSON(ctx, s.out, s.err, src, *trust); err != nil {
		return fail(s.err, "tools import", err)
	}
	return 0
}

func cmdDecisions(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("decisions", "decisions [flags]", "The audit log, newest first (GET /v1/decisions).", true)
	proc := cl.fs.String("procedure", "", "decisions about this procedure")
	kind := cl.enum("kind", "", "only decisions of this kind", append([]string{""}, audit.DecisionKindNames()...)...)
	limit := cl.fs.Int("limit", 100, "how many")
	before := cl.fs.String("before", "", "page back: records older than this decision id (the previous page's next)")
	if _, code, done := cl.parse(args, 0, 0, s); done {
		return code
	}
	q := url.Values{"limit": {strconv.Itoa(*limit)}}
	for k, v := range map[string]string{"procedure": *proc, "kind": *kind, "before": *before} {
		if v != "" {
			q.Set(k, v)
		}
	}
	var out struct {
		Decisions []audit.Decision `json:"decisions"`
		Next      *string          `json:"next"`
	}
	return newClient(ctx).call(ctx, cl, s, "GET", "/v1/decisions", q, nil, &out, func(w io.Writer) {
		var rows [][]string
		for _, d := range out.Decisions {
			rows = append(rows, []string{d.At.Format(timeLayout), d.ID, string(d.Kind), d.Procedure, shortHash(d.CodeHash),
				string(d.Outcome), d.Result, d.Reason, d.Actor, string(d.Phase), d.Note})
		}
		table(w, "AT\tID\tKIND\tPROCEDURE\tCODE HASH\tOUTCOME\tRESULT\tREASON\tACTOR\tPHASE\tNOTE", rows)
		if out.Next != nil {
			keyValues(w, "older", "procgraph decisions --before "+*out.Next)
		}
	})
}

// shortHash is a code hash's first 12 hex digits (a catalogue revision
// keeps its sha256: prefix), enough to tell versions apart in a table;
// --json has the whole.
func shortHash(h string) string {
	prefix, rest, ok := strings.Cut(h, ":")
	if !ok {
		prefix, rest = "", h
	} else {
		prefix += ":"
	}
	if len(rest) > 12 {
		rest = rest[:12]
	}
	return prefix + rest
}

func cmdCauses(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("causes", "causes [NAME] [--json]", "Every cause (GET /v1/causes), or one with its procedures and edge frequencies.", true)
	pos, code, done := cl.parse(args, 0, 1, s)
	if done {
		return code
	}
	if len(pos) == 1 {
		var out struct {
			Name           string                      `json:"name"`
			Description    string                      `json:"description"`
			Frequency      int64                       `json:"frequency"`
			ProcedureCount int64                       `json:"procedure_count"`
			Procedures     []procedures.CauseProcedure `json:"procedures"`
		}
		return newClient(ctx).call(ctx, cl, s, "GET", "/v1/causes/"+pathSegment(pos[0]), nil, nil, &out, func(w io.Writer) {
			keyValues(w, "name", out.Name, "description", out.Description, "frequency", strconv.FormatInt(out.Frequency, 10),
				"procedures", strconv.FormatInt(out.ProcedureCount, 10))
			var rows [][]string
			for _, p := range out.Procedures {
				rows = append(rows, []string{p.Name, strconv.FormatInt(p.Frequency, 10)})
			}
			fmt.Fprintln(w)
			table(w, "PROCEDURE\tFREQUENCY", rows)
		})
	}
	var out struct {
		Causes []procedures.Cause `json:"causes"`
	}
	return newClient(ctx).call(ctx, cl, s, "GET", "/v1/causes", nil, nil, &out, func(w io.Writer) {
		var rows [][]string
		for _, c := range out.Causes {
			rows = append(rows, []string{c.Name, strconv.FormatInt(c.Procedures, 10), strconv.FormatInt(c.Frequency, 10), c.Description})
		}
		table(w, "NAME\tPROCEDURES\tFREQUENCY\tDESCRIPTION", rows)
	})
}

func cmdGraph(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("graph", "graph [--procedure P]... [--cause C]... [--tool T]... [--depth N] [--format json|graphml|dot] [--json]", "A neighbourhood of the procedure graph (GET /v1/graph): causes, procedures, tools and their edges; --format graphml or dot writes the server's export as it sent it.", true)
	var procs, causes, tools repeated
	cl.fs.Var(&procs, "procedure", "start from this procedure (repeatable)")
	cl.fs.Var(&causes, "cause", "start from this cause (repeatable)")
	cl.fs.Var(&tools, "tool", "start from this tool (repeatable)")
	depth := cl.fs.Int("depth", 1, "how many edges out")
	format := cl.fs.String("format", "", "json, graphml (GraphML 1.0) or dot (Graphviz); json is --json")
	if _, code, done := cl.parse(args, 0, 0, s); done {
		return code
	}
	q := url.Values{"procedure": procs, "cause": causes, "tool": tools, "depth": {strconv.Itoa(*depth)}}
	if *format != "" {
		return writeGraphExport(ctx, cl, s, q, *format)
	}
	var g graphview.Graph
	return newClient(ctx).call(ctx, cl, s, "GET", "/v1/graph", q, nil, &g, func(w io.Writer) {
		labels := map[string]string{}
		var rows [][]string
		for _, n := range g.Nodes {
			labels[n.ID] = n.Label
			rows = append(rows, []string{n.Kind, n.Label})
		}
		table(w, "KIND\tNODE", rows)
		rows = nil
		for _, e := range g.Edges {
			rows = append(rows, []string{labels[e.Source], e.Kind, labels[e.Target], strconv.FormatInt(e.Frequency, 10)})
		}
		fmt.Fprintln(w)
		table(w, "FROM\tEDGE\tTO\tFREQUENCY", rows)
		if g.Truncated {
			fmt.Fprintln(w, "(truncated: narrow the query)")
		}
	})
}
