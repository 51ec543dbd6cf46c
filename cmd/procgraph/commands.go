package main

// The client commands that read and write procedures.

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/signature"
)

const timeLayout = "2006-01-02T15:04:05Z"

func cmdProceduresList(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("procedures list", "procedures list [flags]", "find_all_procedures (GET /v1/procedures): a page of procedures, best first.", true)
	var causes, tools repeated
	cl.fs.Var(&causes, "cause", "linked to this cause (repeatable: any of)")
	cl.fs.Var(&tools, "tool", "signature contains this tool (repeatable: all of)")
	limit := cl.fs.Int("limit", 25, "page size")
	offset := cl.fs.Int("offset", 0, "page start")
	readOnly := cl.fs.String("read-only", "", "true or false")
	exposed := cl.fs.String("exposed", "", "true or false")
	status := cl.enum("status", "", "only procedures whose capture", "", string(procedures.StatusSucceeded), string(procedures.StatusFailed))
	search := cl.fs.String("q", "", "relevance search over cause names and summaries, tool names and descriptions: only matching procedures, best match first")
	if _, code, done := cl.parse(args, 0, 0, s); done {
		return code
	}
	q := url.Values{"limit": {strconv.Itoa(*limit)}, "offset": {strconv.Itoa(*offset)}}
	if *search != "" {
		q.Set("q", *search)
	}
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
	c := newClient(ctx)
	return c.call(ctx, cl, s, "GET", "/v1/procedures", q, nil, &out, func(w io.Writer) {
		if out.Total == 0 {
			warnUnknownTools(ctx, c, s.err, tools)
		}
		var rows [][]string
		for _, p := range out.Procedures {
			rows = append(rows, []string{p.Name, strconv.FormatInt(p.Frequency, 10), strconv.FormatInt(p.UseCount, 10),
				yesNo(p.ReadOnly), yesNo(p.Exposed), string(p.Status), yesNo(p.AutoRun.Active)})
		}
		table(w, "NAME\tFREQUENCY\tUSES\tREAD-ONLY\tEXPOSED\tSTATUS\tAUTO-RUN", rows)
		fmt.Fprintf(w, "%d of %d\n", len(out.Procedures), out.Total)
	})
}

func cmdProceduresShow(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("procedures show", "procedures show NAME [--json]", "One procedure with its code (GET /v1/procedures/{name}).", true)
	pos, code, done := cl.parse(args, 1, 1, s)
	if done {
		return code
	}
	var p procedures.Procedure
	return newClient(ctx).about(pos[0]).call(ctx, cl, s, "GET", "/v1/procedures/"+pathSegment(pos[0]), nil, nil, &p, func(w io.Writer) {
		printProcedure(w, &p)
	})
}

func printProcedure(w io.Writer, p *procedures.Procedure) {
	kv := []string{"name", p.Name, "signature", strings.Join(p.Signature, ", "), "status", string(p.Status),
		"read-only", yesNo(p.ReadOnly), "exposed", yesNo(p.Exposed), "frequency", strconv.FormatInt(p.Frequency, 10),
		"use count", strconv.FormatInt(p.UseCount, 10), "code hash", p.CodeHash, "dialect", p.Dialect,
		"parameters", strings.Join(p.Parameters, ", ")}
	if len(p.StateChangingTools) > 0 {
		kv = append(kv, "changes state through", strings.Join(p.StateChangingTools, ", "))
	}
	if len(p.UnknownTools) > 0 {
		kv = append(kv, "unknown tools", strings.Join(p.UnknownTools, ", "))
	}
	kv = append(kv, "auto-run", fmt.Sprintf("enabled=%s active=%s", yesNo(p.AutoRun.Enabled), yesNo(p.AutoRun.Active)))
	if r := p.Retired; r != nil {
		kv = append(kv, "retired", fmt.Sprintf("by %s at %s: %s", r.RetiredBy, r.RetiredAt.Format(timeLayout), r.Reason))
	}
	if p.Demoted {
		kv = append(kv, "demoted", "yes: its current version failed for more than one caller; a passing verify, a promote or procgraph undemote lifts it")
	}
	for _, c := range p.Causes {
		kv = append(kv, "cause", fmt.Sprintf("%s (%d)", c.Name, c.Frequency))
	}
	kv = append(kv, "summary", p.Summary)
	keyValues(w, kv...)
	block(w, p.Code)
}

// dialectFor is the dialect of a procedure file: the --dialect flag when
// given, else python-async for a .py file and starlark otherwise. capture,
// run and signature all choose through it.
func dialectFor(path, flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	if strings.HasSuffix(path, ".py") {
		return "python-async"
	}
	return "starlark"
}

// dialectValues and phases are the values of --dialect and --phase.
var (
	dialectValues = []string{"", string(signature.Starlark), string(signature.PythonAsync)}
	phases        = []string{string(audit.PhaseAutomatic), string(audit.PhaseInteractive)}
)

const dialectUsage = "the block's dialect; default python-async for .py files, else starlark"

func cmdCapture(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("capture", "capture FILE|- [flags]", "Capture a procedure (POST /v1/procedures).", true)
	dialect := cl.enum("dialect", "", dialectUsage, dialectValues...)
	cause := cl.fs.String("cause", "", "the cause this procedure addressed")
	session := cl.fs.String("session", "", "session id: the usage key")
	summary := cl.fs.String("summary", "", "what the procedure does")
	status := cl.enum("status", "succeeded", "how the block's run ended", string(procedures.StatusSucceeded), string(procedures.StatusFailed))
	lift := cl.fs.Bool("lift", true, "lift literal tool arguments into parameters (--lift=false keeps the code as written)")
	pos, code, done := cl.parse(args, 1, 1, s)
	if done {
		return code
	}
	src, err := readSource(pos[0], s.in)
	if err != nil {
		return fail(s.err, "capture", err)
	}
	body := map[string]any{"code": src, "dialect": dialectFor(pos[0], *dialect), "status": *status}
	if !*lift {
		body["lift"] = false
	}
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
		// Version is the version stored (nil for a use).
		Version  *procedures.CapturedVersion `json:"version"`
		Lifted   []procedures.Lifted         `json:"lifted"`
		Warnings []procedures.Warning        `json:"warnings"`
	}
	return newClient(ctx).call(ctx, cl, s, "POST", "/v1/procedures", nil, body, &out, func(w io.Writer) {
		p := out.Procedure
		kv := []string{"name", p.Name, "created", yesNo(out.Created), "version created", yesNo(out.VersionCreated),
			"counted", yesNo(out.Counted), "frequency", strconv.FormatInt(p.Frequency, 10)}
		// The hash of the version this capture stored; the current
		// version's beside it when that is another.
		switch v := out.Version; {
		case v == nil:
			kv = append(kv, "code hash", p.CodeHash)
		case v.Current:
			kv = append(kv, "code hash", v.CodeHash, "current", yesNo(true))
		default:
			kv = append(kv, "code hash", v.CodeHash, "current", yesNo(false), "current version", p.CodeHash)
		}
		keyValues(w, append(kv, "read-only", yesNo(p.ReadOnly), "exposed", yesNo(p.Exposed))...)
		printLifted(w, out.Lifted, out.Warnings)
	})
}

func cmdVersions(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("versions", "versions NAME [CODE_HASH] [--json]", "A procedure's versions; with CODE_HASH, that version with its code, to review before promoting.", true)
	pos, code, done := cl.parse(args, 1, 2, s)
	if done {
		return code
	}
	path := "/v1/procedures/" + pathSegment(pos[0]) + "/versions"
	if len(pos) == 2 {
		var v procedures.Version
		return newClient(ctx).call(ctx, cl, s, "GET", path+"/"+pathSegment(pos[1]), nil, nil, &v, func(w io.Writer) {
			keyValues(w, "code hash", v.CodeHash, "status", string(v.Status), "current", yesNo(v.Current),
				"frequency", strconv.FormatInt(v.Frequency, 10), "captured at", v.CapturedAt.Format(timeLayout), "dialect", v.Dialect)
			block(w, v.Code)
		})
	}
	var out struct {
		Versions []procedures.Version `json:"versions"`
	}
	return newClient(ctx).call(ctx, cl, s, "GET", path, nil, nil, &out, func(w io.Writer) {
		var rows [][]string
		for _, v := range out.Versions {
			cur := ""
			if v.Current {
				cur = "*"
			}
			rows = append(rows, []string{cur, v.CodeHash, string(v.Status), strconv.FormatInt(v.Frequency, 10), v.CapturedAt.Format(timeLayout)})
		}
		table(w, "CURRENT\tCODE HASH\tSTATUS\tFREQUENCY\tCAPTURED", rows)
	})
}

// decisionAnswer is the answer of grant, revoke, promote and retire.
type decisionAnswer struct {
	Procedure procedures.Procedure `json:"procedure"`
	Decision  audit.Decision       `json:"decision"`
}

func (a *decisionAnswer) print(w io.Writer) {
	d, p := a.Decision, a.Procedure
	keyValues(w, "procedure", p.Name, "decision", d.ID, "kind", string(d.Kind), "outcome", string(d.Outcome),
		"reason", d.Reason, "actor", d.Actor, "code hash", d.CodeHash, "note", d.Note, "current code hash", p.CodeHash,
		"auto-run", fmt.Sprintf("enabled=%s active=%s", yesNo(p.AutoRun.Enabled), yesNo(p.AutoRun.Active)),
		"retired", yesNo(p.Retired != nil), "demoted", yesNo(p.Demoted), "exposed", yesNo(p.Exposed))
}

func cmdPromote(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("promote", "promote NAME CODE_HASH [--reason R] [--json]", "Make a version current (review it first: procgraph versions NAME CODE_HASH).", true)
	reason := cl.fs.String("reason", "", "why (kept in the audit log)")
	pos, code, done := cl.parse(args, 2, 2, s)
	if done {
		return code
	}
	var out decisionAnswer
	path := "/v1/procedures/" + pathSegment(pos[0]) + "/versions/" + pathSegment(pos[1]) + "/promote"
	return newClient(ctx).call(ctx, cl, s, "POST", path, nil, map[string]any{"reason": *reason}, &out, func(w io.Writer) { out.print(w) })
}

func cmdAutoRunGrant(ctx context.Context, args []string, s stdio) int {
	return autoRun(ctx, args, s, "grant")
}

func cmdAutoRunRevoke(ctx context.Context, args []string, s stdio) int {
	return autoRun(ctx, args, s, "revoke")
}

// autoRun grants (set_procedure_auto_run) or revokes durable auto-run.
func autoRun(ctx context.Context, args []string, s stdio, verb string) int {
	cl := newCmdline("autorun "+verb, "autorun "+verb+" NAME --reason R [--json]", "Durable auto-run for the procedure's current code hash (PUT or DELETE /v1/procedures/{name}/auto-run).", true)
	reason := cl.fs.String("reason", "", "why (kept in the audit log)")
	pos, code, done := cl.parse(args, 1, 1, s)
	if done {
		return code
	}
	path := "/v1/procedures/" + pathSegment(pos[0]) + "/auto-run"
	method, body := "PUT", map[string]any{"enabled": true, "reason": *reason}
	if verb == "revoke" {
		method, body = "DELETE", map[string]any{"reason": *reason}
	}
	var out decisionAnswer
	return newClient(ctx).call(ctx, cl, s, method, path, nil, body, &out, func(w io.Writer) { out.print(w) })
}
