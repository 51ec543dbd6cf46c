package main

// The review at the call in the CLI: a turn submitted with --review
// at-call runs its reads at once and pauses before its first
// state-changing call; approvals show prints that call first (its tool,
// its arguments as evaluated, its schema hash), then the code with the
// stopping line marked, the reads so far and what each answer covers.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/procgraph/procgraph/gate"
	ptext "github.com/procgraph/procgraph/internal/text"
)

// cliAtCall is the CLI's spelling of gate.ReviewAtCall (turn --review).
const cliAtCall = "at-call"

// reviewFlagValues are the values turn --review takes.
var reviewFlagValues = []string{string(gate.ReviewBlock), cliAtCall, string(gate.ReviewAtCall)}

// reviewOf is the wire value of turn --review v ("" when not given).
func reviewOf(v string) string {
	if v == cliAtCall {
		return string(gate.ReviewAtCall)
	}
	return v
}

// pausedCall is the call a turn paused at (the turn's "call"; "arguments"
// only on an approval read with the grant scope).
type pausedCall struct {
	Position   int             `json:"position"`
	Line       int             `json:"line"`
	Tool       string          `json:"tool"`
	SchemaHash string          `json:"schema_hash"`
	ArgsDigest string          `json:"args_digest"`
	Arguments  json.RawMessage `json:"arguments"`
}

// pausedRead is one read a paused turn made before its call (an
// approval's "reads", grant scope only): its answer as JSON text, cut by
// the server (Truncated, Bytes the whole length), shown here visibly.
type pausedRead struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Response  string          `json:"response"`
	Truncated bool            `json:"truncated"`
	Bytes     int             `json:"bytes"`
}

// shownJSON is raw JSON on one line for a person: compact, with `<`, `>`
// and `&` as they are, and every character that could rewrite a terminal
// or hide what is shown as a JSON escape (text.VisibleJSON: the same
// value, shown visibly). Empty is "null"; what is not JSON is shown as
// text, visibly.
func shownJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "null"
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return ptext.VisibleLine(string(raw))
	}
	return ptext.VisibleJSONLine([]byte(compactJSON(v)))
}

// hasArguments reports whether raw holds arguments (not absent, not null).
func hasArguments(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// printPausedCall prints the call a turn paused at, first of its review:
// the tool, its arguments as evaluated (or why they are not shown), its
// schema hash and arguments' digest, then the code with the stopping line
// marked and the reads made so far. Every value is shown visibly.
func printPausedCall(w io.Writer, c *pausedCall, code string, reads []pausedRead) {
	where := "call " + strconv.Itoa(c.Position+1) + " of the run"
	if c.Line > 0 {
		where += ", line " + strconv.Itoa(c.Line)
	}
	args := ptext.VisibleLine("not shown: the grant scope reads them (digest " + c.ArgsDigest + ")")
	if hasArguments(c.Arguments) {
		args = shownJSON(c.Arguments)
	}
	fmt.Fprintf(w, "paused before a state-changing call (review at the call): nothing of it was sent\n")
	shownValues(w, "call", ptext.VisibleLine("tools."+c.Tool+" ("+where+")"), "arguments", args,
		"schema hash", ptext.VisibleLine(orNone(c.SchemaHash)), "args digest", ptext.VisibleLine(c.ArgsDigest))
	if code != "" {
		fmt.Fprintln(w)
		fmt.Fprintln(w, ptext.MarkedLines(code, c.Line))
	}
	fmt.Fprintf(w, "\nreads so far (%d, answered before the call):\n", len(reads))
	for i, r := range reads {
		fmt.Fprintf(w, "  %d. tools.%s %s\n", i+1, ptext.VisibleLine(r.Tool), shownJSON(r.Arguments))
		resp := ptext.VisibleJSONLine([]byte(r.Response))
		if r.Truncated {
			resp += fmt.Sprintf(" (truncated: %d of %d bytes shown)", len(r.Response), r.Bytes)
		}
		fmt.Fprintf(w, "     -> %s\n", resp)
	}
}

// shownValues prints "key: value" lines aligned as keyValues does, of
// values already shown visibly (shownJSON, text.VisibleLine).
func shownValues(w io.Writer, pairs ...string) {
	width := 0
	for i := 0; i < len(pairs); i += 2 {
		width = max(width, len(pairs[i]))
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		fmt.Fprintf(w, "%-*s %s\n", width+1, pairs[i]+":", pairs[i+1])
	}
}

// orNone is s, or "(none)" when empty.
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// turnState is a turn as the API answers it (gate.Turn: while it is
// paused at a call under review at the call, that call, without its
// arguments).
type turnState struct {
	gate.Turn
}

// paused reports whether t waits for an operator's answer to a call.
func (t *turnState) paused() bool { return t.Status == gate.TurnPending && t.Call != nil }

// callText is the call t paused at, on one line: its tool, position and
// line, and its arguments' digest.
func (t *turnState) callText() string {
	s := "tools." + t.Call.Tool + " (call " + strconv.Itoa(t.Call.Position+1)
	if t.Call.Line > 0 {
		s += ", line " + strconv.Itoa(t.Call.Line)
	}
	return s + "; arguments' digest " + t.Call.ArgsDigest + ")"
}

// approveChoices are the choices approvals approve offers for t.
func (t *turnState) approveChoices() string {
	if t.paused() {
		return "run_once|run_all"
	}
	return "run_once"
}

// callFlagUsage is the usage of approvals approve and reject --call.
const callFlagUsage = "a turn paused at a call: the arguments' digest approvals show printed; the answer is refused unless the turn is still paused at that call (default: the call it is paused at now, said on stderr)"

// answeredCall names in body the call a turn paused at is answered at
// (its position, and the arguments' digest: pinned, from --call, or the
// one it is paused at now, which it says on stderr), so that the server
// refuses the answer once the turn paused at another call. A turn not
// paused at a call leaves body as it is (--call is then refused). ok is
// false when the approval cannot be read, with the exit code.
func answeredCall(ctx context.Context, cl *cmdline, s stdio, id, pinned string, body map[string]any) (int, bool) {
	var a approvalView
	if _, err := newClient(ctx).do(ctx, "GET", "/v1/approvals/"+pathSegment(id), nil, nil, &a); err != nil {
		return failAnswer(cl, s, err), false
	}
	if a.Call == nil || a.Status != gate.TurnPending {
		if pinned != "" {
			return cl.fail(s, "--call answers a turn paused at a call; "+id+" is not"), false
		}
		return 0, true
	}
	digest := pinned
	if digest == "" {
		digest = a.Call.ArgsDigest
		fmt.Fprintf(s.err, "answering %s\n", ptext.VisibleLine("tools."+a.Call.Tool+" (call "+strconv.Itoa(a.Call.Position+1)+
			"; arguments' digest "+a.Call.ArgsDigest+"), the call the turn is paused at now"))
	}
	body["call"] = map[string]any{"position": a.Call.Position, "args_digest": digest}
	return 0, true
}
