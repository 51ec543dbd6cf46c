package main

// The client commands that act: invoke, the catalogue, the audit log.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/procgraph/procgraph/mcpdispatch"
	"github.com/procgraph/procgraph/procedures"
)

func cmdInvoke(ctx context.Context, c *client, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs, asJSON := newFlags("invoke", stderr)
	phase := fs.String("phase", "", "automatic or interactive (required)")
	var argv repeated
	fs.Var(&argv, "arg", "k=v argument; v is read as JSON when it parses, else as a string (repeatable)")
	session := fs.String("session", "", "session id: the usage key")
	cause := fs.String("cause", "", "the cause this replay addresses")
	reviewedBy := fs.String("reviewed-by", "", "the operator who reviewed this call (needs the grant scope)")
	pos, err := parseInterleaved(fs, args)
	if err != nil || len(pos) != 1 || *phase == "" {
		fmt.Fprintln(stderr, "usage: procgraph invoke NAME --phase automatic|interactive [--arg k=v]... [--session S] [--cause C] [--reviewed-by R] [--json]")
		return 2
	}
	arguments, err := parseArgs(argv)
	if err != nil {
		fmt.Fprintf(stderr, "procgraph invoke: %v\n", err)
		return 2
	}
	body := map[string]any{"arguments": arguments, "phase": *phase}
	for k, v := range map[string]string{"session_id": *session, "cause": *cause, "reviewed_by": *reviewedBy} {
		if v != "" {
			body[k] = v
		}
	}
	var out map[string]any
	if _, err := c.do(ctx, "POST", "/v1/procedures/"+url.PathEscape(pos[0])+"/invoke", nil, body, nil, &out); err != nil {
		return fail(stderr, "invoke", err)
	}
	output(stdout, true, out, nil)
	_ = asJSON
	if out["status"] != "succeeded" {
		return 1
	}
	return 0
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

func cmdTools(ctx context.Context, c *client, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	usage := "usage: procgraph tools get [--json] | procgraph tools put FILE | procgraph tools import --from-mcp URL|--from-mcp-command CMD [--trust-annotations]"
	if len(args) > 0 && args[0] == "import" {
		return cmdToolsImport(ctx, args[1:], stdout, stderr)
	}
	if len(args) == 0 || (args[0] != "get" && args[0] != "put") {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	fs, asJSON := newFlags("tools "+args[0], stderr)
	pos, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return 2
	}
	var out struct {
		Tools    []procedures.Tool `json:"tools"`
		Revision string            `json:"revision"`
	}
	if args[0] == "put" {
		if len(pos) != 1 {
			fmt.Fprintln(stderr, usage)
			return 2
		}
		b, err := os.ReadFile(pos[0])
		if err != nil {
			return fail(stderr, "tools put", err)
		}
		var body any
		if err := json.Unmarshal(b, &body); err != nil {
			return fail(stderr, "tools put", fmt.Errorf("%s is not JSON: %v", pos[0], err))
		}
		if _, err := c.do(ctx, "PUT", "/v1/tools", nil, body, nil, &out); err != nil {
			return fail(stderr, "tools put", err)
		}
		output(stdout, *asJSON, out, func(w io.Writer) { fmt.Fprintf(w, "%d tools, revision %s\n", len(out.Tools), out.Revision) })
		return 0
	}
	if _, err := c.do(ctx, "GET", "/v1/tools", nil, nil, nil, &out); err != nil {
		return fail(stderr, "tools get", err)
	}
	output(stdout, *asJSON, out, func(w io.Writer) {
		var rows [][]string
		for _, t := range out.Tools {
			rows = append(rows, []string{t.Name, yesNo(t.ReadOnly), yesNo(t.ExternalAccess), t.Description})
		}
		table(w, "NAME\tREAD-ONLY\tEXTERNAL\tDESCRIPTION", rows)
		fmt.Fprintf(w, "revision %s\n", out.Revision)
	})
	return 0
}

func cmdDecisions(ctx context.Context, c *client, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs, asJSON := newFlags("decisions", stderr)
	proc := fs.String("procedure", "", "decisions about this procedure")
	kind := fs.String("kind", "", "invoke, grant, revoke, promote or catalogue")
	limit := fs.Int("limit", 100, "how many")
	before := fs.String("before", "", "page back: records older than this decision id (the previous page's next)")
	if _, err := parseInterleaved(fs, args); err != nil {
		return 2
	}
	q := url.Values{"limit": {strconv.Itoa(*limit)}}
	if *proc != "" {
		q.Set("procedure", *proc)
	}
	if *kind != "" {
		q.Set("kind", *kind)
	}
	if *before != "" {
		q.Set("before", *before)
	}
	var out struct {
		Decisions []procedures.Decision `json:"decisions"`
		Next      *string               `json:"next"`
	}
	if _, err := c.do(ctx, "GET", "/v1/decisions", q, nil, nil, &out); err != nil {
		return fail(stderr, "decisions", err)
	}
	output(stdout, *asJSON, out, func(w io.Writer) {
		var rows [][]string
		for _, d := range out.Decisions {
			rows = append(rows, []string{d.At.Format("2006-01-02T15:04:05Z"), string(d.Kind), d.Procedure, string(d.Outcome), d.Reason, d.Actor, string(d.Phase)})
		}
		table(w, "AT\tKIND\tPROCEDURE\tOUTCOME\tREASON\tACTOR\tPHASE", rows)
		if out.Next != nil {
			fmt.Fprintf(w, "older: procgraph decisions --before %s\n", *out.Next)
		}
	})
	return 0
}

// cmdToolsImport builds a catalogue from an MCP server's tools/list for an
// operator to review and put: read_only is taken from the server's
// readOnlyHint only with --trust-annotations (hints are not a security
// boundary), else false.
func cmdToolsImport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	usage := "usage: procgraph tools import --from-mcp URL|--from-mcp-command \"CMD ARGS\" [--trust-annotations] > catalogue.json"
	fs := flag.NewFlagSet("tools import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fromURL := fs.String("from-mcp", "", "streamable HTTP MCP server URL")
	fromCommand := fs.String("from-mcp-command", "", "MCP server command, spoken to over stdio")
	trust := fs.Bool("trust-annotations", false, "take read_only from the server's readOnlyHint")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 || (*fromURL == "") == (*fromCommand == "") {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	src := mcpdispatch.Source{URL: *fromURL}
	if *fromCommand != "" {
		argv, err := mcpdispatch.SplitCommand(*fromCommand)
		if err != nil {
			fmt.Fprintf(stderr, "procgraph tools import: --from-mcp-command: %v\n", err)
			return 2
		}
		src = mcpdispatch.Source{Command: argv}
	}
	if err := mcpdispatch.ImportCatalogueJSON(ctx, stdout, stderr, src, *trust); err != nil {
		return fail(stderr, "tools import", err)
	}
	return 0
}
