package mcpserve

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/internal/fields"
	ptext "github.com/procgraph/procgraph/internal/text"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/reuse"
	"github.com/procgraph/procgraph/usage"
)

// The turn gate's tools.
const (
	RunCodeToolName       = "run_code"
	AwaitApprovalToolName = "await_approval"
)

// runCodeInput is run_code's input: POST /v1/turns's fields.
var runCodeInput = fields.Body(fields.Req(fields.Code), fields.Opt(fields.Dialect),
	fields.Opt(fields.SessionID.NonEmpty().Described("the agent's session (default: this MCP session)")),
	fields.Opt(fields.Field{Name: "arguments", Type: fields.Object, Doc: fields.Arguments.Doc}), fields.Opt(fields.TurnSummary),
	fields.Opt(fields.Review))

// awaitInput is await_approval's input.
var awaitInput = fields.Body(fields.Req(fields.TurnID),
	fields.Opt(fields.WaitS.Described("wait up to this many seconds (default 30)")))

var (
	runCodeSchema = toolSchema(runCodeInput)
	awaitSchema   = toolSchema(awaitInput)
)

// reviewSchema is what an operator answers through elicitation.
var reviewSchema = json.RawMessage(`{"type": "object", "required": ["choice"], "properties": {
  "choice": {"type": "string", "enum": ["run_once", "auto_run", "always_ask", "reject"], "description": "run it once; run it and skip review next time (the message says what auto_run covers: this program in this session, or a durable grant for every caller); run it and ask again next time; or reject it"},
  "reason": {"type": "string", "description": "why, for the audit log"}}}`)

// callReviewSchema is what an operator answers through elicitation for a
// turn paused at a call (review at the call).
var callReviewSchema = json.RawMessage(`{"type": "object", "required": ["choice"], "properties": {
  "choice": {"type": "string", "enum": ["run_once", "run_all", "auto_run", "always_ask", "reject"], "description": "run this call, then go on to the next state-changing call (asked again) or the end; run this call and every later state-changing call of this run; run the rest and auto-run this block in this session (the message says what it covers); run this call and ask again next time; or reject it (the run ends, the call is never sent)"},
  "reason": {"type": "string", "description": "why, for the audit log"}}}`)

type runCodeArgs struct {
	Code      string         `json:"code"`
	Dialect   string         `json:"dialect"`
	SessionID string         `json:"session_id"`
	Arguments map[string]any `json:"arguments"`
	Summary   string         `json:"summary"`
	Review    string         `json:"review"`
}

// addTurnTools registers run_code and, on the interactive endpoint,
// await_approval (when a gate is configured).
func (h *Handler) addTurnTools() error {
	if h.cfg.Gate == nil {
		return nil
	}
	rc, err := compile(runCodeInput)
	if err != nil {
		return err
	}
	desc := "run_code: run a block of code through procgraph's turn gate. In this automatic endpoint only read-only blocks run; others are denied."
	if h.cfg.Phase == audit.PhaseInteractive {
		desc = "run_code: run a block of code through procgraph's turn gate. New code is reviewed by an operator (asked here when you may review it, else the answer names the pending approval: call await_approval with its id)."
	}
	h.server.AddTool(&mcp.Tool{Name: RunCodeToolName, Description: desc, InputSchema: runCodeSchema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: false, OpenWorldHint: new(true)}}, h.checkedReq(rc, h.runCode))
	if h.cfg.Phase != audit.PhaseInteractive {
		return nil
	}
	aw, err := compile(awaitInput)
	if err != nil {
		return err
	}
	h.server.AddTool(&mcp.Tool{Name: AwaitApprovalToolName,
		Description: "await_approval: wait for an operator's answer to a pending turn; runs it once approved.",
		InputSchema: awaitSchema, Annotations: &mcp.ToolAnnotations{OpenWorldHint: new(true)}},
		h.checkedReq(aw, h.awaitApproval))
	return nil
}

// checkedReq is checked for handlers that need the request itself.
func (h *Handler) checkedReq(schema *input, f func(context.Context, *mcp.CallToolRequest, caller, map[string]any) (*mcp.CallToolResult, error)) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return h.checked(schema, func(ctx context.Context, c caller, args map[string]any) (*mcp.CallToolResult, error) {
			return f(ctx, req, c, args)
		})(ctx, req)
	}
}

// runCode is run_code: POST /v1/turns in this endpoint's phase. On the
// interactive endpoint a pending turn is reviewed in the client when the
// client supports elicitation and the caller holds grant (the caller is
// then the operator, recorded as such): by elicitation on a session
// (2025-11-25 and older), by an input-required result on a ModernRevision
// request, whose retry (requestState and inputResponses) resumeReview
// answers. Otherwise the answer names the pending approval.
func (h *Handler) runCode(ctx context.Context, req *mcp.CallToolRequest, c caller, args map[string]any) (*mcp.CallToolResult, error) {
	if req.Params.RequestState != "" || req.Params.InputResponses != nil {
		return h.resumeReview(ctx, req, c, args)
	}
	var a runCodeArgs
	if err := remarshal(args, &a); err != nil {
		return nil, err
	}
	if a.SessionID == "" {
		a.SessionID = usage.MCPSession(mcpSessionID(req), c.name)
	}
	ans, err := h.cfg.Gate.Submit(ctx, gate.TurnRequest{Code: a.Code, Dialect: a.Dialect, SessionID: a.SessionID,
		Phase: h.cfg.Phase, Arguments: a.Arguments, Summary: a.Summary, Actor: c.name, MayCapture: c.has(auth.ScopeCapture),
		Review: gate.Review(a.Review)})
	if err != nil {
		return nil, err
	}
	if ans.Ran() {
		return turnResult(ans)
	}
	if c.has(auth.ScopeGrant) && canElicit(req) {
		if modernRequest(req) {
			return h.askReview(ctx, c, args, ans.Turn.ID, ans.Suggestion)
		}
		return h.review(ctx, req, c, ans.Turn.ID, ans.Suggestion)
	}
	return pendingResult(ans.Turn, ans.Suggestion)
}

// mcpSessionID is the MCP session of req, "" on a stateless request
// (usage.MCPSession says what stands for it then).
func mcpSessionID(req *mcp.CallToolRequest) string {
	if req.Session == nil {
		return ""
	}
	return req.Session.ID()
}

// canElicit reports whether the client declared elicitation (on a
// ModernRevision request, in that request's _meta).
func canElicit(req *mcp.CallToolRequest) bool {
	caps := req.ClientCapabilities()
	return caps != nil && caps.Elicitation != nil
}

// reviewInput is the key of the review among an input-required result's
// inputRequests (and the retry's inputResponses).
const reviewInput = "review"

// review asks the caller (an operator) to resolve turn id through
// elicitation on its session; see resolveReview. sug is the turn's reuse
// suggestion (Gate.Submit's), which the answer carries either way.
// A turn reviewed at the call is asked again at each call it pauses at,
// until it ends or the operator does not approve.
func (h *Handler) review(ctx context.Context, req *mcp.CallToolRequest, c caller, id string, sug *reuse.Suggestion) (*mcp.CallToolResult, error) {
	for {
		appr, err := h.cfg.Gate.Approval(ctx, id, true)
		if err != nil {
			return nil, err
		}
		res, err := req.Session.Elicit(ctx, reviewParams(appr))
		if err != nil {
			h.log.Warn().Err(err).Str("turn", id).Msg("mcp: review by elicitation failed; the approval stays pending")
			return pendingResult(appr.Turn, sug)
		}
		ans, out, err := h.resolveReview(ctx, c, appr.Turn, callRefOf(appr.Turn.Call), res, sug)
		if err != nil || out != nil {
			return out, err
		}
		if ans.Ran() {
			return turnResult(ans)
		}
		if ans.Turn.Status != gate.TurnPending {
			return pendingResult(ans.Turn, sug)
		}
	}
}

// callRefOf names the call a turn is paused at (nil: none).
func callRefOf(c *gate.TurnCall) *gate.CallRef {
	if c == nil {
		return nil
	}
	return &gate.CallRef{Position: c.Position, ArgsDigest: c.ArgsDigest}
}

// reviewParams is the elicitation that asks for the review of a.
func reviewParams(a *gate.Approval) *mcp.ElicitParams {
	if a.Call != nil {
		return &mcp.ElicitParams{Message: reviewMessage(a), RequestedSchema: callReviewSchema}
	}
	return &mcp.ElicitParams{Message: reviewMessage(a), RequestedSchema: reviewSchema}
}

// askReview answers a ModernRevision call whose turn id waits for review
// with an input-required result: the review as an elicitation, and a
// requestState binding the turn, the caller, this endpoint, the turn's
// code hash and the call's arguments until the turn's deadline (and sug,
// the turn's reuse suggestion, for the final answer).
func (h *Handler) askReview(ctx context.Context, c caller, args map[string]any, id string, sug *reuse.Suggestion) (*mcp.CallToolResult, error) {
	appr, err := h.cfg.Gate.Approval(ctx, id, true)
	if err != nil {
		return nil, err
	}
	digest, err := argsDigest(args)
	if err != nil {
		return nil, err
	}
	state, err := h.reviews.issue(reviewClaim{Turn: id, Holder: c.name, Phase: string(h.cfg.Phase),
		CodeHash: appr.CodeHash, Args: digest, Expires: appr.Deadline.UnixMilli(), Suggestion: sug, Call: callRefOf(appr.Turn.Call)})
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{reviewInput: reviewParams(appr)}, RequestState: state}, nil
}

// resumeReview answers the retry of a ModernRevision run_code with the
// review's answer: the requestState must be one askReview issued for this
// caller, endpoint and arguments, unused and before the turn's deadline
// (see reviewStates.redeem); the turn must still be the one it named (the
// same code hash, pending, requested by the caller), and the caller must
// still hold grant. Then the answer resolves it as the legacy review does.
// A retry on an older revision is refused: its review is elicitation.
func (h *Handler) resumeReview(ctx context.Context, req *mcp.CallToolRequest, c caller, args map[string]any) (*mcp.CallToolResult, error) {
	if !modernRequest(req) {
		return nil, fault.Errorf(fault.CodeInvalid, "requestState and inputResponses answer a review on MCP %s or later only", ModernRevision).
			WithDetails("reason", ReasonRequestState).WithDetails("field", "requestState")
	}
	if !c.has(auth.ScopeGrant) {
		return nil, auth.Forbidden(auth.ScopeGrant)
	}
	digest, err := argsDigest(args)
	if err != nil {
		return nil, err
	}
	claim, err := h.reviews.redeem(req.Params.RequestState, c.name, string(h.cfg.Phase), digest)
	if err != nil {
		return nil, err
	}
	res, ok := req.Params.InputResponses[reviewInput].(*mcp.ElicitResult)
	if !ok || len(req.Params.InputResponses) != 1 {
		return nil, fault.Errorf(fault.CodeInvalid, "inputResponses must hold one elicitation result, %q", reviewInput).
			WithDetails("field", "inputResponses")
	}
	appr, err := h.cfg.Gate.Approval(ctx, claim.Turn, true)
	if err != nil {
		return nil, err
	}
	if appr.CodeHash != claim.CodeHash || appr.RequestedBy != c.name || appr.Status != gate.TurnPending {
		return nil, fault.Errorf(fault.CodeConflict, "turn %s is %s: this review no longer answers it", appr.ID, appr.Status).
			WithDetails("reason", "status").WithDetails("status", string(appr.Status))
	}
	ans, out, err := h.resolveReview(ctx, c, appr.Turn, claim.Call, res, claim.Suggestion)
	if err != nil || out != nil {
		return out, err
	}
	if ans.Ran() {
		return turnResult(ans)
	}
	if ans.Turn.Status != gate.TurnPending {
		return pendingResult(ans.Turn, claim.Suggestion)
	}
	// Paused at the next call: asked again, with a state for that call.
	return h.askReview(ctx, c, args, claim.Turn, claim.Suggestion)
}

// resolveReview resolves turn t with the operator's (c's) answer res,
// given at call (nil: a block's review): accepted, their choice resolves
// it (as their approval) and an approved turn runs — ans, which ran, or
// paused at its next call (reviewed at the call); declined, it is
// rejected; cancelled (or anything else), it stays pending. out, when
// set, is the tool's answer already.
func (h *Handler) resolveReview(ctx context.Context, c caller, t gate.Turn, call *gate.CallRef, res *mcp.ElicitResult, sug *reuse.Suggestion) (ans *gate.TurnAnswer, out *mcp.CallToolResult, err error) {
	id := t.ID
	var choice gate.Choice
	reason := ""
	switch res.Action {
	case "accept":
		ch, _ := res.Content["choice"].(string)
		reason, _ = res.Content["reason"].(string)
		choice = gate.Choice(ch)
	case "decline":
		choice, reason = gate.ChoiceReject, "declined in the MCP client"
	default:
		out, err := pendingResult(t, sug)
		return nil, out, err
	}
	rt, _, err := h.cfg.Gate.Resolve(ctx, gate.ResolveRequest{ID: id, Choice: choice, Reason: reason, Actor: c.name, HasGrant: true, Call: call})
	if err != nil && rt == nil {
		return nil, nil, err
	}
	if err != nil {
		h.log.Warn().Err(err).Str("turn", id).Msg("mcp: approval resolved, but what it remembers could not be stored")
	}
	if rt.Status != gate.TurnApproved {
		return nil, nil, fault.Errorf(fault.CodeDenied, "turn %s was rejected by %s", id, c.name).WithDetails("turn", rt)
	}
	ans, err = h.cfg.Gate.Run(ctx, id, c.name)
	if err != nil {
		return nil, nil, err
	}
	ans.Suggestion = sug
	return ans, nil, nil
}

// reviewMessage is the review an operator reads in the MCP client: the
// signature, classification and code hash the server computed, then the
// agent's summary, arguments and code, every procedure it may reach with
// its code (gate.Approval.Nested), and what each answer covers. Everything an agent or the catalogue wrote is
// shown visibly (text.Visible; one-line fields text.VisibleLine), so the
// message reads as what runs.
func reviewMessage(a *gate.Approval) string {
	line := func(xs []string) string { return ptext.VisibleLine(strings.Join(xs, ", ")) }
	var b strings.Builder
	if a.Call != nil {
		callFirst(&b, a)
	}
	fmt.Fprintf(&b, "Review turn %s.\n", ptext.VisibleLine(a.ID))
	fmt.Fprintf(&b, "Session: %s\nRequested by: %s\n", ptext.VisibleLine(a.SessionID), ptext.VisibleLine(a.RequestedBy))
	fmt.Fprintf(&b, "Signature: %s\n", cmp.Or(line(a.Signature), "(no tools)"))
	if a.ReadOnly {
		b.WriteString("Read-only: yes\n")
	} else {
		fmt.Fprintf(&b, "Read-only: no: it changes state through %s\n", cmp.Or(line(a.StateChangingTools), "what the catalogue does not declare read-only"))
	}
	if len(a.UnknownTools) > 0 {
		fmt.Fprintf(&b, "Unknown tools (refused at run time): %s\n", line(a.UnknownTools))
	}
	if a.Opaque {
		b.WriteString("Opaque: yes (it uses tools other than as tools.NAME(...))\n")
	}
	for _, p := range a.Procedures {
		fmt.Fprintf(&b, "Calls procedure: %s (read-only %t, auto-run %t)\n", ptext.VisibleLine(p.Name), p.ReadOnly, p.AutoRun)
	}
	fmt.Fprintf(&b, "Code hash: %s\n", ptext.VisibleLine(a.CodeHash))
	if a.Summary != "" {
		fmt.Fprintf(&b, "Summary (the agent's): %s\n", ptext.VisibleLine(a.Summary))
	}
	if a.Arguments != nil {
		args, err := json.Marshal(a.Arguments)
		if err != nil {
			args = []byte("(not shown: " + err.Error() + ")")
		}
		fmt.Fprintf(&b, "Arguments: %s\n", ptext.VisibleLine(string(args)))
	}
	if a.Call != nil {
		b.WriteString("\nCode (> marks the call's line):\n" + ptext.MarkedLines(a.Code, a.Call.Line))
	} else {
		b.WriteString("\nCode:\n" + ptext.Visible(a.Code))
	}
	b.WriteString("\n")
	for _, r := range a.Nested {
		b.WriteString("\nRuns procedure " + ptext.VisibleLine(r.Heading()) + ":\n")
		if r.Code != "" {
			b.WriteString(ptext.Visible(strings.TrimRight(r.Code, "\n")) + "\n")
		}
		if t := r.TruncatedText(); t != "" {
			b.WriteString("(" + ptext.VisibleLine(t) + ")\n")
		}
	}
	if len(a.Covers) > 0 {
		b.WriteString("\nWhat each answer covers:\n")
		for _, c := range a.Covers {
			fmt.Fprintf(&b, "- %s\n", ptext.VisibleLine(c.Text))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// callFirst writes the head of the review of a turn paused at a call
// (review at the call): the call — tool, arguments as the program
// evaluated them, schema hash, where it stopped — and the reads made
// before it, each answer as the server bounds it (gate.Read: JSON text,
// hidden characters as JSON escapes), every value shown visibly.
func callFirst(b *strings.Builder, a *gate.Approval) {
	c := a.Call
	fmt.Fprintf(b, "Paused before tools.%s (call %d", ptext.VisibleLine(c.Tool), c.Position+1)
	if c.Line > 0 {
		fmt.Fprintf(b, ", line %d", c.Line)
	}
	b.WriteString("): a state-changing call; nothing of it was sent. Your answer is for this call.\n")
	if c.Arguments != nil {
		fmt.Fprintf(b, "Its arguments (as evaluated): %s\n", visibleJSON(c.Arguments))
	} else {
		fmt.Fprintf(b, "Its arguments: not shown (the grant scope reads them); digest %s\n", ptext.VisibleLine(c.ArgsDigest))
	}
	fmt.Fprintf(b, "Schema hash: %s\nArguments digest: %s\n", ptext.VisibleLine(cmp.Or(c.SchemaHash, "(none: a proc__ call)")), ptext.VisibleLine(c.ArgsDigest))
	fmt.Fprintf(b, "Reads so far (%d), answered before the call:\n", len(a.Reads))
	for i, r := range a.Reads {
		fmt.Fprintf(b, "%d. tools.%s %s\n   -> %s", i+1, ptext.VisibleLine(r.Tool), visibleJSON(r.Arguments), ptext.VisibleJSONLine([]byte(r.Response)))
		if r.Truncated {
			fmt.Fprintf(b, " (truncated: %d of %d bytes shown)", len(r.Response), r.Bytes)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// visibleJSON is v as JSON on one line, `<`, `>` and `&` as they are,
// every hidden character a JSON escape (text.VisibleJSONLine), or why it
// cannot be shown.
func visibleJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "(not shown: " + ptext.VisibleLine(err.Error()) + ")"
	}
	return ptext.VisibleJSONLine(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// awaitApproval is await_approval: it waits for the operator, then runs an
// approved turn.
func (h *Handler) awaitApproval(ctx context.Context, _ *mcp.CallToolRequest, c caller, args map[string]any) (*mcp.CallToolResult, error) {
	var a struct {
		ID    string `json:"id"`
		WaitS *int   `json:"wait_s"`
	}
	if err := remarshal(args, &a); err != nil {
		return nil, err
	}
	wait := 30 * time.Second
	if a.WaitS != nil {
		wait = time.Duration(*a.WaitS) * time.Second
	}
	t, err := h.cfg.Gate.Get(ctx, a.ID, c.name, wait)
	if err != nil {
		return nil, err
	}
	switch t.Status {
	case gate.TurnApproved:
		ans, err := h.cfg.Gate.Run(ctx, a.ID, c.name)
		if err != nil {
			return nil, err
		}
		return turnResult(ans)
	case gate.TurnPending:
		return pendingResult(*t, nil)
	}
	return nil, fault.Errorf(fault.CodeConflict, "turn %s is %s: it will not run", t.ID, t.Status).
		WithDetails("reason", "status").WithDetails("status", string(t.Status))
}

// turnResult answers a turn that ran; a failed run is a tool error with
// the result as structured content, and as JSON text whose hidden
// characters are JSON escapes (text.VisibleJSON: the same value, shown
// visibly; its message quotes the upstream).
func turnResult(ans *gate.TurnAnswer) (*mcp.CallToolResult, error) {
	if !ans.Ran() {
		// A turn reviewed at the call that paused again at its next
		// state-changing call: pending, as a submit that waits.
		return pendingResult(ans.Turn, nil)
	}
	res, err := jsonResult(ans, nil)
	if err != nil {
		return nil, err
	}
	res.IsError = ans.Status != replay.StatusSucceeded
	if res.IsError {
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				t.Text = string(ptext.VisibleJSON([]byte(t.Text)))
			}
		}
	}
	return res, nil
}

// pendingResult names the pending approval and, as POST /v1/turns's 202
// does, the turn's reuse suggestion (nil: none).
func pendingResult(t gate.Turn, sug *reuse.Suggestion) (*mcp.CallToolResult, error) {
	body := map[string]any{"turn": t, "pending_approval": t.ID,
		"next": "an operator must approve this block: call await_approval with id " + t.ID}
	msg := "pending approval " + t.ID + ": an operator must approve this block; call await_approval with this id"
	if c := t.Call; c != nil && t.Status == gate.TurnPending {
		// Reviewed at the call: its reads ran; the call waits (its
		// arguments are the operator's to read, not in this answer).
		at := fmt.Sprintf("paused before tools.%s (call %d): its reads ran, that call was not sent; an operator must review it", c.Tool, c.Position+1)
		body["next"] = at + ": call await_approval with id " + t.ID
		msg = "pending approval " + t.ID + ": " + at + "; call await_approval with this id"
	}
	if sug != nil {
		body["suggestion"] = sug
		msg += ". " + sug.Message
	}
	res, err := jsonResult(body, nil)
	if err != nil {
		return nil, err
	}
	res.Content = append([]mcp.Content{&mcp.TextContent{Text: ptext.Visible(msg)}}, res.Content...)
	return res, nil
}
