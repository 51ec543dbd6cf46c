package main

// The client commands of the turn gate: submit a turn, review approvals,
// and list or revoke session policies.

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/binding"
	"github.com/procgraph/procgraph/gate"
	ptext "github.com/procgraph/procgraph/internal/text"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/signature"
)

// turnCommands are the turn gate's client commands (part of the command table).
func turnCommands() []command {
	return []command{
		{"turn", "submit a block as a turn: it runs, is denied, or waits for an operator", cmdTurn},
		{"turn wait", "wait for an operator's answer to a pending turn, then run it once approved", cmdTurnWait},
		{"turn run", "run a turn an operator approved (after its submitter stopped waiting)", cmdTurnRun},
		{"approvals list", "approvals, newest first (pending by default)", cmdApprovalsList},
		{"approvals show", "one approval with its code (a turn paused at a call: that call first)", cmdApprovalsShow},
		{"approvals approve", "approve a pending turn: run_once, run_all (at a call), auto_run or always_ask (grant)", cmdApprovalsApprove},
		{"approvals reject", "reject a pending turn (grant)", cmdApprovalsReject},
		{"policies list", "a session's policies and the durable grants", cmdPoliciesList},
		{"policies revoke", "revoke a session's policy by code-hash prefix, or all (grant)", cmdPoliciesRevoke},
	}
}

// turnAnswer is POST /v1/turns' answer (200 ran, 202 pending).
type turnAnswer struct {
	replay.InvokeResult
	Turn      turnState             `json:"turn"`
	Procedure *procedures.Procedure `json:"procedure"`
}

func cmdTurn(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("turn", "turn FILE|- --session S --phase automatic|interactive [flags]",
		"Submit a block as a turn (POST /v1/turns). Exit 0 when it ran and succeeded, 1 when refused or failed, 3 when it awaits an operator "+
			"(with --review at-call: its reads ran, and it paused before its first state-changing call).", true)
	session := cl.fs.String("session", "", "session id (required)")
	phase := cl.enum("phase", "", "required", phases...)
	dialect := cl.enum("dialect", "", dialectUsage, dialectValues...)
	var argv repeated
	cl.fs.Var(&argv, "arg", argUsage)
	wait := cl.fs.Duration("wait", 0, "wait this long (at most 60s) for an operator before answering pending")
	summary := cl.fs.String("summary", "", "what the block does, for the operator")
	causeName := cl.fs.String("capture-cause", "", "capture the block under this cause once it succeeded")
	review := cl.enum("review", "", "how an operator reviews it: the whole block before it runs, or at-call: its reads run at once and it pauses before its first state-changing call, with that call's real arguments (default: the server's --review-default)", reviewFlagValues...)
	pos, code, done := cl.parse(args, 1, 1, s)
	if done {
		return code
	}
	if *session == "" || *phase == "" {
		return cl.fail(s, "--session and --phase are required")
	}
	if *wait < 0 || *wait > time.Minute {
		return cl.fail(s, "--wait must be between 0 and 60s")
	}
	arguments, err := parseArgs(argv)
	if err != nil {
		return cl.fail(s, err.Error())
	}
	src, err := readSource(pos[0], s.in)
	if err != nil {
		return fail(s.err, "turn", err)
	}
	body := map[string]any{"code": src, "dialect": dialectFor(pos[0], *dialect), "session_id": *session, "phase": *phase,
		"arguments": arguments}
	if *summary != "" {
		body["summary"] = *summary
	}
	if *review != "" {
		body["review"] = reviewOf(*review)
	}
	if *causeName != "" {
		body["capture"] = map[string]any{"cause": map[string]any{"name": *causeName}}
	}
	var out turnAnswer
	c := newClient(ctx)
	raw, err := c.do(ctx, "POST", "/v1/turns", nil, body, &out)
	if err != nil {
		return failAnswer(cl, s, err)
	}
	if *wait > 0 && out.Turn.Status == gate.TurnPending {
		// The id first, so that the person waiting can look the turn up
		// (or take the wait up again with turn wait) while it waits.
		fmt.Fprintf(s.err, "turn %s: pending; waiting up to %s for an operator (procgraph turn wait %s waits again)\n",
			ptext.VisibleLine(out.Turn.ID), wait.Round(time.Second), ptext.VisibleLine(out.Turn.ID))
		return awaitTurn(ctx, cl, s, c, out.Turn.ID, *wait, false)
	}
	if cl.asJSON() {
		printRawJSON(s.out, raw)
	} else {
		printTurnAnswer(s.out, &out)
	}
	return turnExit(&out)
}

// turnExit is the exit code of a turn's answer: 0 ran and succeeded, 1
// refused or failed, 3 still pending.
func turnExit(a *turnAnswer) int {
	switch {
	case a.Turn.Status == gate.TurnPending:
		return 3
	case a.Status != replay.StatusSucceeded:
		return 1
	}
	return 0
}

// maxTurnWait is the longest one GET /v1/turns/{id}?wait_s=N holds.
const maxTurnWait = 60 * time.Second

// cmdTurnWait waits for an operator's answer to a pending turn (GET
// /v1/turns/{id}?wait_s=N, again until --timeout) and runs it once
// approved (POST /v1/turns/{id}/run), as MCP's await_approval does.
func cmdTurnWait(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("turn wait", "turn wait ID [--timeout D] [--no-run] [--json]",
		"Wait for an operator's answer to a pending turn (GET /v1/turns/{id}?wait_s=N), then run it once approved (POST /v1/turns/{id}/run). Exit 0 when it ran and succeeded, 1 when rejected, expired or failed, 3 when still pending at --timeout (or approved, with --no-run).", true)
	timeout := cl.fs.Duration("timeout", 10*time.Minute, "wait at most this long (0: ask once, without waiting)")
	noRun := cl.fs.Bool("no-run", false, "only wait: leave an approved turn for procgraph turn run")
	pos, code, done := cl.parse(args, 1, 1, s)
	if done {
		return code
	}
	if *timeout < 0 {
		return cl.fail(s, "--timeout must not be negative")
	}
	return awaitTurn(ctx, cl, s, newClient(ctx), pos[0], *timeout, *noRun)
}

// awaitTurn waits up to timeout for an operator's answer to the pending
// turn id, then runs it once approved (unless noRun); its exit code is
// turn wait's.
func awaitTurn(ctx context.Context, cl *cmdline, s stdio, c *client, id string, timeout time.Duration, noRun bool) int {
	path := "/v1/turns/" + pathSegment(id)
	var stop func()
	if timeout > 0 {
		stop = startProgress(s.err, "waiting for an operator to review "+id)
		defer stop()
	}
	deadline := time.Now().Add(timeout)
	var got struct {
		Turn turnState `json:"turn"`
	}
	var raw []byte
	for {
		wait := min(time.Until(deadline), maxTurnWait).Round(time.Second)
		var err error
		raw, err = c.do(ctx, "GET", path, url.Values{"wait_s": {strconv.Itoa(max(0, int(wait/time.Second)))}}, nil, &got)
		if err != nil {
			if stop != nil {
				stop()
			}
			return failAnswer(cl, s, err)
		}
		if got.Turn.Status != gate.TurnPending || time.Until(deadline) < time.Second {
			break
		}
	}
	if stop != nil {
		stop()
	}
	t := got.Turn
	switch {
	case t.Status == gate.TurnApproved && !noRun:
		return runTurn(ctx, cl, s, c, id)
	case t.Status == gate.TurnPending || t.Status == gate.TurnApproved:
		if cl.asJSON() {
			printRawJSON(s.out, raw)
		} else {
			printTurnState(s.out, &t)
		}
		return 3
	}
	if cl.asJSON() {
		printRawJSON(s.out, raw)
	} else {
		printTurnState(s.out, &t)
	}
	if t.Status == gate.TurnSucceeded {
		return 0
	}
	return 1
}

// cmdTurnRun runs a turn an operator approved (POST /v1/turns/{id}/run).
func cmdTurnRun(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("turn run", "turn run ID [--json]",
		"Run a turn an operator approved (POST /v1/turns/{id}/run), once. Exit 0 when it ran and succeeded, 1 when it failed or cannot run (not approved yet, already run, expired).", true)
	pos, code, done := cl.parse(args, 1, 1, s)
	if done {
		return code
	}
	return runTurn(ctx, cl, s, newClient(ctx), pos[0])
}

func runTurn(ctx context.Context, cl *cmdline, s stdio, c *client, id string) int {
	var out turnAnswer
	if code := c.call(ctx, cl, s, "POST", "/v1/turns/"+pathSegment(id)+"/run", nil, nil, &out, func(w io.Writer) { printTurnAnswer(w, &out) }); code != 0 {
		return code
	}
	return turnExit(&out)
}

// printTurnState prints a turn that has not run (yet): its status and
// what to do next.
func printTurnState(w io.Writer, t *turnState) {
	kv := []string{"turn", t.ID, "status", string(t.Status), "deadline", t.Deadline.Format(timeLayout)}
	if r := t.Resolution; r != nil {
		kv = append(kv, "resolution", fmt.Sprintf("%s by %s at %s", r.Choice, r.By, r.At.Format(timeLayout)))
	}
	if t.paused() {
		kv = append(kv, "paused before", t.callText())
	}
	switch t.Status {
	case gate.TurnPending:
		kv = append(kv, "next", "procgraph turn wait "+t.ID+" (an operator reviews with procgraph approvals show "+t.ID+
			" and approves with procgraph approvals approve "+t.ID+" --choice "+t.approveChoices()+")")
	case gate.TurnApproved:
		kv = append(kv, "next", "procgraph turn run "+t.ID)
	}
	keyValues(w, kv...)
}

func printTurnAnswer(w io.Writer, a *turnAnswer) {
	if t := &a.Turn; t.Status == gate.TurnPending {
		status := "pending: an operator must decide"
		if t.paused() {
			status = "pending: paused before a state-changing call (its reads ran; the call was not sent)"
		}
		kv := []string{"turn", t.ID, "status", status, "deadline", t.Deadline.Format(timeLayout)}
		if t.paused() {
			kv = append(kv, "paused before", t.callText())
		}
		keyValues(w, append(kv, "review with", "procgraph approvals show "+t.ID,
			"approve with", "procgraph approvals approve "+t.ID+" --choice "+t.approveChoices())...)
		return
	}
	keyValues(w, "turn", a.Turn.ID)
	printReplay(w, &a.InvokeResult)
	if a.Procedure != nil {
		keyValues(w, "captured as", a.Procedure.Name)
	}
}

// approvalView is an approval as the API answers it.
type approvalView struct {
	gate.Turn
	Code       string                   `json:"code"`
	Arguments  map[string]any           `json:"arguments"`
	Procedures []gate.ApprovalProcedure `json:"procedures"`
	Nested     []binding.Reached        `json:"nested"`
	Covers     []gate.Cover             `json:"covers"`
	// Call is the call a turn under review at the call paused at (nil
	// otherwise), Reads the reads it made before it (grant scope).
	Call  *pausedCall  `json:"call"`
	Reads []pausedRead `json:"reads"`
}

// printReview prints what an approval runs beyond its own code — every
// procedure it may reach with its code, each level (a truncated one says
// where its whole code is) — and what each answer covers.
func printReview(w io.Writer, a *approvalView) {
	for _, r := range a.Nested {
		fmt.Fprintf(w, "\nruns procedure %s\n", ptext.VisibleLine(r.Heading()))
		if r.Code != "" {
			block(w, r.Code)
		}
		if t := r.TruncatedText(); t != "" {
			fmt.Fprintf(w, "(%s)\n", ptext.VisibleLine(t))
		}
	}
	if len(a.Covers) > 0 {
		fmt.Fprintln(w, "\nwhat each answer covers:")
		for _, c := range a.Covers {
			fmt.Fprintf(w, "  %s\n", ptext.VisibleLine(c.Text))
		}
	}
}

func cmdApprovalsList(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("approvals list", "approvals list [flags]", "Approvals, newest first (GET /v1/approvals).", true)
	status := cl.enum("status", string(gate.TurnPending), "only turns in this status (\"\": all)", turnStatuses()...)
	session := cl.fs.String("session", "", "only this session's")
	limit := cl.fs.Int("limit", 50, "how many")
	if _, code, done := cl.parse(args, 0, 0, s); done {
		return code
	}
	q := url.Values{"limit": {strconv.Itoa(*limit)}}
	if *status != "" {
		q.Set("status", *status)
	}
	if *session != "" {
		q.Set("session", *session)
	}
	var out struct {
		Approvals []approvalView `json:"approvals"`
	}
	return newClient(ctx).call(ctx, cl, s, "GET", "/v1/approvals", q, nil, &out, func(w io.Writer) {
		var rows [][]string
		for _, a := range out.Approvals {
			status := string(a.Status)
			if a.Call != nil && a.Status == gate.TurnPending {
				status += " at tools." + a.Call.Tool // paused at a call
			}
			rows = append(rows, []string{a.ID, a.SessionID, status, strings.Join(a.Signature, ","),
				yesNo(a.ReadOnly), a.RequestedBy, a.Deadline.Format(timeLayout)})
		}
		table(w, "ID\tSESSION\tSTATUS\tTOOLS\tREAD-ONLY\tREQUESTED BY\tDEADLINE", rows)
	})
}

func cmdApprovalsShow(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("approvals show", "approvals show ID [--json]", "One approval with its code (GET /v1/approvals/{id}). "+
		"A turn paused at a call (review at the call) shows that call first: its tool, its arguments as the run evaluated them, its schema hash; "+
		"then the code with the call's line marked, the reads so far and what each answer covers.", true)
	pos, code, done := cl.parse(args, 1, 1, s)
	if done {
		return code
	}
	var a approvalView
	return newClient(ctx).call(ctx, cl, s, "GET", "/v1/approvals/"+pathSegment(pos[0]), nil, nil, &a, func(w io.Writer) {
		// A turn paused at a call shows the call first: what runs next,
		// with its real arguments, is what the operator answers for.
		paused := a.Call != nil && a.Status == gate.TurnPending
		if paused {
			printPausedCall(w, a.Call, a.Code, a.Reads)
			fmt.Fprintln(w)
		}
		kv := []string{"id", a.ID, "session", a.SessionID, "status", string(a.Status), "phase", string(a.Phase),
			"tools", strings.Join(a.Signature, ", "), "read-only", yesNo(a.ReadOnly), "code hash", a.CodeHash,
			"requested by", a.RequestedBy, "deadline", a.Deadline.Format(timeLayout)}
		if len(a.StateChangingTools) > 0 {
			kv = append(kv, "changes state through", strings.Join(a.StateChangingTools, ", "))
		}
		if len(a.UnknownTools) > 0 {
			kv = append(kv, "unknown tools", strings.Join(a.UnknownTools, ", "))
		}
		if a.Opaque {
			kv = append(kv, "opaque", "yes: it uses tools other than as tools.NAME(...)")
		}
		for _, p := range a.Procedures {
			kv = append(kv, "calls procedure", fmt.Sprintf("%s (read-only %s, auto-run %s)", p.Name, yesNo(p.ReadOnly), yesNo(p.AutoRun)))
		}
		if a.Summary != "" {
			kv = append(kv, "summary", a.Summary)
		}
		if a.Review != "" {
			kv = append(kv, "review", string(a.Review))
		}
		if a.Arguments != nil {
			kv = append(kv, "arguments", compactJSON(a.Arguments))
		}
		if r := a.Resolution; r != nil {
			kv = append(kv, "resolution", fmt.Sprintf("%s by %s at %s", r.Choice, r.By, r.At.Format(timeLayout)))
		}
		keyValues(w, kv...)
		if a.Code != "" && !paused {
			block(w, a.Code)
		}
		printReview(w, &a)
	})
}

func cmdApprovalsApprove(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("approvals approve", "approvals approve ID --choice run_once|run_all|auto_run|always_ask --reason R [--call DIGEST] [--code FILE] [--yes]",
		"Approve a pending turn (POST /v1/approvals/{id}/resolve). --code replaces the block: the edited code is what runs. "+
			"A turn paused at a call (review at the call) is answered for that call: run_once runs it and goes on to the next state-changing call, "+
			"run_all runs it and every later state-changing call of this run, auto_run runs the rest and remembers the session policy for the whole block. "+
			"An auto_run that grants durable auto-run (a block of proc__ calls only) says what it grants and needs --yes, or a yes typed at the terminal.", true)
	choice := cl.enum("choice", "", "required", string(gate.ChoiceRunOnce), string(gate.ChoiceRunAll), string(gate.ChoiceAutoRun), string(gate.ChoiceAlwaysAsk))
	reason := cl.fs.String("reason", "", "why, for the audit log (required, as the console requires it)")
	codeFile := cl.fs.String("code", "", "a file (or -) with the edited block to run instead")
	yes := cl.fs.Bool("yes", false, "confirm the durable grants an auto_run creates (for every caller and any arguments, until revoked)")
	digest := cl.fs.String("call", "", callFlagUsage)
	pos, code, done := cl.parse(args, 1, 1, s)
	if done {
		return code
	}
	switch gate.Choice(*choice) {
	case gate.ChoiceRunOnce, gate.ChoiceRunAll, gate.ChoiceAutoRun, gate.ChoiceAlwaysAsk:
	default:
		return cl.fail(s, "--choice must be run_once, run_all, auto_run or always_ask (approvals reject rejects)")
	}
	if strings.TrimSpace(*reason) == "" {
		return cl.fail(s, reasonRequired)
	}
	body := map[string]any{"choice": *choice, "reason": *reason}
	var edited *string
	if *codeFile != "" {
		src, err := readSource(*codeFile, s.in)
		if err != nil {
			return fail(s.err, "approvals approve", err)
		}
		body["code"] = src
		edited = &src
	}
	if gate.Choice(*choice) == gate.ChoiceAutoRun {
		if code, ok := confirmGrants(ctx, cl, s, pos[0], edited, *yes); !ok {
			return code
		}
	}
	if code, ok := answeredCall(ctx, cl, s, pos[0], *digest, body); !ok {
		return code
	}
	return resolveCall(ctx, cl, s, pos[0], body)
}

// confirmGrants tells the operator what the auto_run of approval id
// grants (gate.Cover.Grants: durable auto-run for every caller and any
// arguments, until revoked) and has them confirm it: --yes, or "yes"
// typed at the terminal. With edited code (--code), what the edited block
// would grant (editedCover). ok is false when they did not, with the exit
// code: 2 (usage) without --yes off a terminal, 1 when refused or when the
// approval cannot be read.
func confirmGrants(ctx context.Context, cl *cmdline, s stdio, id string, edited *string, yes bool) (int, bool) {
	var a approvalView
	if _, err := newClient(ctx).do(ctx, "GET", "/v1/approvals/"+pathSegment(id), nil, nil, &a); err != nil {
		return failAnswer(cl, s, err), false
	}
	var cover *gate.Cover
	for i := range a.Covers {
		if a.Covers[i].Choice == gate.ChoiceAutoRun {
			cover = &a.Covers[i]
		}
	}
	if edited != nil {
		cover = editedCover(*edited, &a)
	}
	if cover == nil || len(cover.Grants) == 0 {
		return 0, true
	}
	fmt.Fprintf(s.err, "%s\n", ptext.VisibleLine(cover.Text))
	if yes {
		return 0, true
	}
	if !isTerminalReader(s.in) {
		return cl.fail(s, "this auto_run grants durable auto-run of "+strings.Join(cover.Grants, ", ")+" (above): confirm with --yes"), false
	}
	fmt.Fprintf(s.err, "Grant it? Type yes to confirm: ")
	line, _ := bufio.NewReader(s.in).ReadString('\n')
	if strings.TrimSpace(line) != "yes" {
		fmt.Fprintln(s.err, "procgraph approvals approve: not confirmed; nothing was resolved")
		return 1, false
	}
	return 0, true
}

// editedCover is what an auto_run of approval a with its block replaced
// by code grants, said by gate.Covers as the server would: the code is
// analysed in each dialect (the server analyses it in the approval's), and
// a block of proc__ calls only in either is taken to grant them. nil when
// it grants nothing.
func editedCover(code string, a *approvalView) *gate.Cover {
	for _, d := range []signature.Dialect{signature.Starlark, signature.PythonAsync} {
		an, err := signature.Analyze(code, d)
		if err != nil || len(an.ProcRefs) == 0 || len(an.ProcRefs) != len(an.Signature) {
			continue
		}
		for _, c := range gate.Covers(gate.CoverScope{ProcOnly: true, Procs: an.ProcRefs, SessionID: a.SessionID, Requester: a.RequestedBy}) {
			if c.Choice == gate.ChoiceAutoRun {
				return &c
			}
		}
	}
	return nil
}

// isTerminalReader reports whether r is a terminal.
func isTerminalReader(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func cmdApprovalsReject(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("approvals reject", "approvals reject ID --reason R [--call DIGEST]", "Reject a pending turn (POST /v1/approvals/{id}/resolve): it never runs.", true)
	reason := cl.fs.String("reason", "", "why, for the audit log (required, as the console requires it)")
	digest := cl.fs.String("call", "", callFlagUsage)
	pos, code, done := cl.parse(args, 1, 1, s)
	if done {
		return code
	}
	if strings.TrimSpace(*reason) == "" {
		return cl.fail(s, reasonRequired)
	}
	body := map[string]any{"choice": "reject", "reason": *reason}
	if code, ok := answeredCall(ctx, cl, s, pos[0], *digest, body); !ok {
		return code
	}
	return resolveCall(ctx, cl, s, pos[0], body)
}

func resolveCall(ctx context.Context, cl *cmdline, s stdio, id string, body map[string]any) int {
	var out struct {
		Turn     gate.Turn      `json:"turn"`
		Decision audit.Decision `json:"decision"`
	}
	return newClient(ctx).call(ctx, cl, s, "POST", "/v1/approvals/"+pathSegment(id)+"/resolve", nil, body, &out, func(w io.Writer) {
		keyValues(w, "turn", out.Turn.ID, "status", string(out.Turn.Status),
			"decision", fmt.Sprintf("%s %s (%s)", out.Decision.ID, out.Decision.Outcome, out.Decision.Reason))
	})
}

func cmdPoliciesList(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("policies list", "policies list SESSION [--json]", "A session's policies and every durable grant (GET /v1/sessions/{id}/policies).", true)
	pos, code, done := cl.parse(args, 1, 1, s)
	if done {
		return code
	}
	var out struct {
		Policies []gate.PolicyState `json:"policies"`
		Grants   []struct {
			Procedure      string  `json:"procedure"`
			CodeHash       string  `json:"code_hash"`
			GrantedBy      string  `json:"granted_by"`
			Active         bool    `json:"active"`
			InactiveReason *string `json:"inactive_reason"`
		} `json:"grants"`
	}
	return newClient(ctx).call(ctx, cl, s, "GET", "/v1/sessions/"+pathSegment(pos[0])+"/policies", nil, nil, &out, func(w io.Writer) {
		var rows [][]string
		for _, p := range out.Policies {
			rows = append(rows, []string{shortHash(p.CodeHash), string(p.Policy), cmp.Or(p.RequestedBy, "(nobody)"),
				activeOr(p.InactiveReason), p.SetBy, p.SetAt.Format(timeLayout), p.Summary})
		}
		table(w, "CODE HASH\tPOLICY\tFOR\tACTIVE\tSET BY\tSET AT\tSUMMARY", rows)
		rows = nil
		for _, g := range out.Grants {
			active := yesNo(g.Active)
			if !g.Active && g.InactiveReason != nil {
				active = activeOr(g.InactiveReason)
			}
			rows = append(rows, []string{g.Procedure, shortHash(g.CodeHash), g.GrantedBy, active})
		}
		fmt.Fprintln(w)
		table(w, "GRANTED PROCEDURE\tCODE HASH\tGRANTED BY\tACTIVE", rows)
	})
}

// activeOr is an ACTIVE cell: "yes", or "no (REASON)" for an
// authorization inactive for REASON.
func activeOr(reason *string) string {
	if reason == nil {
		return "yes"
	}
	return "no (" + *reason + ")"
}

func cmdPoliciesRevoke(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("policies revoke", "policies revoke SESSION PREFIX|all [--json]",
		"Revoke the session's policy whose code hash starts with PREFIX (8+ hex), or all of them (DELETE /v1/sessions/{id}/policies[/{prefix}]).", true)
	pos, code, done := cl.parse(args, 2, 2, s)
	if done {
		return code
	}
	path := "/v1/sessions/" + pathSegment(pos[0]) + "/policies"
	if pos[1] != "all" {
		path += "/" + pathSegment(pos[1])
	}
	var out struct {
		Revoked int `json:"revoked"`
	}
	return newClient(ctx).call(ctx, cl, s, "DELETE", path, nil, nil, &out, func(w io.Writer) {
		keyValues(w, "revoked", strconv.Itoa(out.Revoked))
	})
}

// turnStatuses are the values of approvals list --status: each turn
// status, and "" for all.
func turnStatuses() []string {
	out := []string{""}
	for _, st := range gate.TurnStatuses {
		out = append(out, string(st))
	}
	return out
}

// reasonRequired is the usage error of an answer without --reason: the
// console asks for one too, so every operator's answer is explained in
// the audit log.
const reasonRequired = "--reason is required: why, for the audit log"
