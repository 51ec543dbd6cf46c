package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/procgraph/procgraph/procedures"
)

// clientCommand is one client subcommand over HTTP.
type clientCommand func(ctx context.Context, c *client, args []string, stdin io.Reader, stdout, stderr io.Writer) int

func clientCommands() map[string]clientCommand {
	return map[string]clientCommand{
		"procedures": cmdProcedures,
		"capture":    cmdCapture,
		"autorun":    cmdAutoRun,
		"versions":   cmdVersions,
		"promote":    cmdPromote,
		"invoke":     cmdInvoke,
		"tools":      cmdTools,
		"decisions":  cmdDecisions,
	}
}

func newFlags(name string, stderr io.Writer) (*flag.FlagSet, *bool) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs, fs.Bool("json", false, "print JSON for scripts")
}

func table(w io.Writer, header string, rows [][]string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}

func cmdProcedures(ctx context.Context, c *client, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "list" && args[0] != "show") {
		fmt.Fprintln(stderr, "usage: procgraph procedures list [--cause C]... [--tool T]... [--limit N] [--offset N] [--read-only B] [--exposed B] [--status S] [--json]\n       procgraph procedures show NAME [--json]")
		return 2
	}
	fs, asJSON := newFlags("procedures "+args[0], stderr)
	var causes, tools repeated
	fs.Var(&causes, "cause", "linked to this cause (repeatable: any of)")
	fs.Var(&tools, "tool", "signature contains this tool (repeatable: all of)")
	limit := fs.Int("limit", 25, "page size")
	offset := fs.Int("offset", 0, "page start")
	readOnly := fs.String("read-only", "", "true or false")
	exposed := fs.String("exposed", "", "true or false")
	status := fs.String("status", "", "succeeded or failed")
	pos, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return 2
	}
	if args[0] == "show" {
		if len(pos) != 1 {
			fmt.Fprintln(stderr, "usage: procgraph procedures show NAME [--json]")
			return 2
		}
		var p procedures.Procedure
		if _, err := c.do(ctx, "GET", "/v1/procedures/"+url.PathEscape(pos[0]), nil, nil, nil, &p); err != nil {
			return fail(stderr, "procedures show", err)
		}
		output(stdout, *asJSON, p, func(w io.Writer) { printProcedure(w, &p) })
		return 0
	}
	q := url.Values{"limit": {strconv.Itoa(*limit)}, "offset": {strconv.Itoa(*offset)}}
	q["cause"], q["tool"] = causes, tools
	for k, v := range map[string]string{"read_only": *readOnly, "exposed": *exposed, "status": *status} {
		if v != "" {
			q.Set(k, v)
		}
	}
	var out struct {
		Procedures []procedures.Procedure `json:"procedures"`
		Total      int                    `json:"total"`
	}
	if _, err := c.do(ctx, "GET", "/v1/procedures", q, nil, nil, &out); err != nil {
		return fail(stderr, "procedures list", err)
	}
	output(stdout, *asJSON, out, func(w io.Writer) {
		var rows [][]string
		for _, p := range out.Procedures {
			rows = append(rows, []string{p.Name, strconv.FormatInt(p.Frequency, 10), strconv.FormatInt(p.UseCount, 10),
				yesNo(p.ReadOnly), yesNo(p.Exposed), string(p.Status), yesNo(p.AutoRun.Active)})
		}
		table(w, "NAME\tFREQUENCY\tUSES\tREAD-ONLY\tEXPOSED\tSTATUS\tAUTO-RUN", rows)
		fmt.Fprintf(w, "%d of %d\n", len(out.Procedures), out.Total)
	})
	return 0
}

func printProcedure(w io.Writer, p *procedures.Procedure) {
	fmt.Fprintf(w, "name:        %s\nsignature:   %s\nstatus:      %s\nread-only:   %s\nexposed:     %s\n",
		p.Name, strings.Join(p.Signature, ", "), p.Status, yesNo(p.ReadOnly), yesNo(p.Exposed))
	fmt.Fprintf(w, "frequency:   %d\nuse count:   %d\ncode hash:   %s\nparameters:  %s\n", p.Frequency, p.UseCount, p.CodeHash, strings.Join(p.Parameters, ", "))
	if len(p.StateChangingTools) > 0 {
		fmt.Fprintf(w, "changes state through: %s\n", strings.Join(p.StateChangingTools, ", "))
	}
	if len(p.UnknownTools) > 0 {
		fmt.Fprintf(w, "unknown tools: %s\n", strings.Join(p.UnknownTools, ", "))
	}
	fmt.Fprintf(w, "auto-run:    enabled=%s active=%s\n", yesNo(p.AutoRun.Enabled), yesNo(p.AutoRun.Active))
	for _, c := range p.Causes {
		fmt.Fprintf(w, "cause:       %s (%d)\n", c.Name, c.Frequency)
	}
	fmt.Fprintf(w, "summary:     %s\n\n%s\n", p.Summary, p.Code)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func cmdCapture(ctx context.Context, c *client, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs, asJSON := newFlags("capture", stderr)
	dialect := fs.String("dialect", "", "starlark or python-async (default: python-async for .py files, else starlark)")
	cause := fs.String("cause", "", "the cause this procedure addressed")
	session := fs.String("session", "", "session id: the usage key")
	summary := fs.String("summary", "", "what the procedure does")
	status := fs.String("status", "succeeded", "succeeded or failed")
	pos, err := parseInterleaved(fs, args)
	if err != nil || len(pos) != 1 {
		fmt.Fprintln(stderr, "usage: procgraph capture FILE [--dialect D] [--cause C] [--session S] [--summary S] [--status S] [--json]")
		return 2
	}
	code, err := readSource(pos[0], stdin)
	if err != nil {
		return fail(stderr, "capture", err)
	}
	if *dialect == "" {
		*dialect = "starlark"
		if strings.HasSuffix(pos[0], ".py") {
			*dialect = "python-async"
		}
	}
	body := map[string]any{"code": code, "dialect": *dialect, "status": *status}
	if *cause != "" {
		body["cause"] = map[string]any{"name": *cause}
	}
	if *session != "" {
		body["session_id"] = *session
	}
	if *summary != "" {
		body["summary"] = *summary
	}
	var out struct {
		Procedure      procedures.Procedure `json:"procedure"`
		Created        bool                 `json:"created"`
		VersionCreated bool                 `json:"version_created"`
		Counted        bool                 `json:"counted"`
	}
	if _, err := c.do(ctx, "POST", "/v1/procedures", nil, body, nil, &out); err != nil {
		return fail(stderr, "capture", err)
	}
	output(stdout, *asJSON, out, func(w io.Writer) {
		fmt.Fprintf(w, "%s  created=%s version_created=%s counted=%s frequency=%d read_only=%s exposed=%s\n",
			out.Procedure.Name, yesNo(out.Created), yesNo(out.VersionCreated), yesNo(out.Counted),
			out.Procedure.Frequency, yesNo(out.Procedure.ReadOnly), yesNo(out.Procedure.Exposed))
	})
	return 0
}

type decisionAnswer struct {
	Procedure procedures.Procedure `json:"procedure"`
	Decision  procedures.Decision  `json:"decision"`
}

func cmdAutoRun(ctx context.Context, c *client, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	usage := "usage: procgraph autorun grant|revoke NAME --reason R [--json]"
	if len(args) == 0 || (args[0] != "grant" && args[0] != "revoke") {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	fs, asJSON := newFlags("autorun "+args[0], stderr)
	reason := fs.String("reason", "", "why (kept in the audit log)")
	pos, err := parseInterleaved(fs, args[1:])
	if err != nil || len(pos) != 1 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	path := "/v1/procedures/" + url.PathEscape(pos[0]) + "/auto-run"
	var out decisionAnswer
	if args[0] == "grant" {
		_, err = c.do(ctx, "PUT", path, nil, map[string]any{"enabled": true, "reason": *reason}, nil, &out)
	} else {
		_, err = c.do(ctx, "DELETE", path, nil, map[string]any{"reason": *reason}, nil, &out)
	}
	if err != nil {
		return fail(stderr, "autorun "+args[0], err)
	}
	output(stdout, *asJSON, out, func(w io.Writer) {
		fmt.Fprintf(w, "%s: %s %s (%s), decision %s; auto-run enabled=%s active=%s\n", out.Procedure.Name, out.Decision.Kind,
			out.Decision.Outcome, out.Decision.Reason, out.Decision.ID, yesNo(out.Procedure.AutoRun.Enabled), yesNo(out.Procedure.AutoRun.Active))
	})
	return 0
}

func cmdVersions(ctx context.Context, c *client, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs, asJSON := newFlags("versions", stderr)
	pos, err := parseInterleaved(fs, args)
	if err != nil || len(pos) < 1 || len(pos) > 2 {
		fmt.Fprintln(stderr, "usage: procgraph versions NAME [CODE_HASH] [--json]")
		return 2
	}
	if len(pos) == 2 {
		var v map[string]any
		if _, err := c.do(ctx, "GET", "/v1/procedures/"+url.PathEscape(pos[0])+"/versions/"+url.PathEscape(pos[1]), nil, nil, nil, &v); err != nil {
			return fail(stderr, "versions", err)
		}
		output(stdout, *asJSON, v, func(w io.Writer) {
			fmt.Fprintf(w, "code hash:   %v\nstatus:      %v\ncurrent:     %v\nfrequency:   %v\ncaptured at: %v\ndialect:     %v\n\n%v\n",
				v["code_hash"], v["status"], v["current"], v["frequency"], v["captured_at"], v["dialect"], v["code"])
		})
		return 0
	}
	var out struct {
		Versions []procedures.Version `json:"versions"`
	}
	if _, err := c.do(ctx, "GET", "/v1/procedures/"+url.PathEscape(pos[0])+"/versions", nil, nil, nil, &out); err != nil {
		return fail(stderr, "versions", err)
	}
	output(stdout, *asJSON, out, func(w io.Writer) {
		var rows [][]string
		for _, v := range out.Versions {
			cur := ""
			if v.Current {
				cur = "*"
			}
			rows = append(rows, []string{cur, v.CodeHash, string(v.Status), strconv.FormatInt(v.Frequency, 10), v.CapturedAt.Format("2006-01-02T15:04:05Z")})
		}
		table(w, "CURRENT\tCODE HASH\tSTATUS\tFREQUENCY\tCAPTURED", rows)
	})
	return 0
}

func cmdPromote(ctx context.Context, c *client, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs, asJSON := newFlags("promote", stderr)
	reason := fs.String("reason", "", "why (kept in the audit log)")
	pos, err := parseInterleaved(fs, args)
	if err != nil || len(pos) != 2 {
		fmt.Fprintln(stderr, "usage: procgraph promote NAME CODE_HASH [--reason R] [--json]")
		return 2
	}
	var out decisionAnswer
	path := "/v1/procedures/" + url.PathEscape(pos[0]) + "/versions/" + url.PathEscape(pos[1]) + "/promote"
	if _, err := c.do(ctx, "POST", path, nil, map[string]any{"reason": *reason}, nil, &out); err != nil {
		return fail(stderr, "promote", err)
	}
	output(stdout, *asJSON, out, func(w io.Writer) {
		fmt.Fprintf(w, "%s: current version is now %s (decision %s)\n", out.Procedure.Name, out.Procedure.CodeHash, out.Decision.ID)
	})
	return 0
}
