package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/decide"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/jsonvalue"
	"github.com/procgraph/procgraph/internal/telemetry"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/recording"
	"github.com/procgraph/procgraph/sandbox"
)

// The review at the call (issue 37; ADR 0045 "the determinism of a
// resume"): a block runs at once under the read-only allow-set, every
// call recorded with its answer, and stops before its first state-changing
// call (a Pause). An approval of that call (CallApproval) resumes it: the
// block runs again from the start, each earlier call answered from the
// record (no tool is called twice), the program must reach the same call
// with the same canonical arguments under the same schema hash — else it
// diverged, and nothing is dispatched — and that call is dispatched once;
// the run then goes on under the read-only allow-set to the next
// state-changing call (another Pause) or its end. Between a pause and a
// resume nothing is held: no worker process, no goroutine, only the Pause.

// The reasons a resume is refused (fault.CodeConflict, details "reason"):
// ReasonDiverged, the run did not reach the approved call as it paused
// (details "call": the index of the call where it did not, and "detail":
// why, never a value); ReasonApprovalMismatch, the approval is not the
// approval of the pause's call (nothing ran).
const (
	ReasonDiverged         = "diverged"
	ReasonApprovalMismatch = "approval_mismatch"
)

// Pause is a run stopped before a state-changing call, as a plain value:
// everything a resume needs and a review shows, and nothing live.
type Pause struct {
	// Block is BlockDigest of the block that paused: a resume runs only
	// that block.
	Block string `json:"block"`
	// Position is the call's index in the run's sequence of tool calls
	// (from 0): the number of calls before it.
	Position int `json:"position"`
	// Tool is the tool called (a catalogue tool or a proc__ procedure).
	Tool string `json:"tool"`
	// Arguments are the call's arguments as the program evaluated them.
	Arguments map[string]any `json:"arguments"`
	// SchemaHash is the tool's procedures.SchemaHash in the block's
	// catalogue ("" for a proc__ call: its binding is the nested
	// procedure's, binding.Binding).
	SchemaHash string `json:"schema_hash"`
	// ArgsDigest is jsonvalue.Digest of Arguments.
	ArgsDigest string `json:"args_digest"`
	// Line is the line of the block the call is on, as the run reported
	// it (0 when it did not): shown, never trusted.
	Line int `json:"line,omitempty"`
	// Calls are the calls before it, in order, each as answered: the reads
	// and the calls approved before it. A resume answers them from here.
	Calls []PausedCall `json:"calls"`
}

// PausedCall is one call before a pause: the tool, the arguments the
// program sent and the answer it got, as the exact JSON the run's values
// cross the worker boundary in (sandbox.EncodeJSON: 2.0 stays a float, 2
// an integer), so that a resume gives the program the very values the
// first run got, whatever JSON store the pause went through.
type PausedCall struct {
	Tool      string          `json:"tool"`
	Arguments map[string]any  `json:"arguments"`
	Response  json.RawMessage `json:"response"`
}

// CallApproval is an operator's approval of one paused call: bound to its
// position, tool, schema hash and arguments' digest. Rest approves every
// later state-changing call of the run too (the block's review, given
// after the first call was seen).
type CallApproval struct {
	Position   int    `json:"position"`
	Tool       string `json:"tool"`
	SchemaHash string `json:"schema_hash"`
	ArgsDigest string `json:"args_digest"`
	Rest       bool   `json:"rest,omitempty"`
}

// Approval is the approval of p's call (rest: and of every later
// state-changing call of the run).
func (p *Pause) Approval(rest bool) CallApproval {
	return CallApproval{Position: p.Position, Tool: p.Tool, SchemaHash: p.SchemaHash, ArgsDigest: p.ArgsDigest, Rest: rest}
}

// AtCallResult is where a run at the call got to: a Pause, or its end
// (Result, succeeded or failed).
type AtCallResult struct {
	// Pause is set when the run stopped before a state-changing call.
	Pause *Pause
	// Result is the run's result when it ended (nil when it paused).
	Result *InvokeResult
	// Calls are every call of the run as answered, in order: those a
	// resume answered from the record, the approved ones, the reads (a
	// call that failed, ending the run, last with its error). When the
	// run ended and succeeded they are its recording's calls.
	Calls []recording.RecordedCall
	// Dispatched are the positions of the state-changing calls this run
	// dispatched (the approved call, and with CallApproval.Rest the later
	// ones), in order.
	Dispatched []int
}

// BlockDigest names the block a pause belongs to: the digest
// (jsonvalue.Digest) of its name, code hash, statement hash and
// arguments.
func BlockDigest(b *Block) (string, error) {
	return jsonvalue.Digest(map[string]any{"name": b.Name, "code_hash": b.Analysis.CodeHash,
		"statement_hash": b.Analysis.StatementHash, "arguments": b.Arguments})
}

// RunAtCall runs req.Block under review at the call: its reads (the calls
// of req.Allowed that the read-only allow-set, AllowSet with a verdict
// that permits no state change, also permits) are dispatched and recorded;
// the first other call of req.Allowed is not dispatched: the run stops and
// the answer is its Pause. A call outside req.Allowed is refused as in
// any run. A block that makes no state-changing call ends as RunBlock
// ends it (its decision's result and use left in req.Pending, which the
// caller commits, as RunBlock's). Errors:
// fault.CodeTooLarge (reason recording_too_large) when the calls before
// the pause are larger than a recording may be or are not JSON
// (recording.NewRecording; nothing state-changing ran), fault.CodeInvalid
// for a block that cannot be digested.
func (r *Replayer) RunAtCall(ctx context.Context, req RunRequest) (*AtCallResult, error) {
	return r.runAtCall(ctx, req, nil, nil)
}

// ResumeAtCall runs req.Block again after the approval a of the call p
// paused at: from the start, each of p.Calls answered from the record
// (never dispatched), then the approved call — which must be call
// p.Position, of tool a.Tool, with a.SchemaHash in the block's catalogue
// and arguments of digest a.ArgsDigest — dispatched once, then on as
// RunAtCall (with a.Rest, every later state-changing call dispatched too).
// Errors, with nothing dispatched: fault.CodeConflict reason
// ReasonApprovalMismatch (a is not p.Approval), reason ReasonDiverged (the
// block is not the one that paused, or the run did not reach the approved
// call as recorded: another call, other arguments, another schema hash,
// an earlier end), fault.CodeInvalid (a pause that does not hold
// together); RunAtCall's.
func (r *Replayer) ResumeAtCall(ctx context.Context, req RunRequest, p *Pause, a CallApproval) (*AtCallResult, error) {
	if p == nil {
		return nil, fault.Errorf(fault.CodeInvalid, "no pause to resume")
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	if a != p.Approval(a.Rest) {
		return nil, fault.Errorf(fault.CodeConflict, "the approval is not the approval of the paused call (call %d, tools.%s)", p.Position, p.Tool).
			WithDetails("reason", ReasonApprovalMismatch)
	}
	digest, err := BlockDigest(req.Block)
	if err != nil {
		return nil, fault.Errorf(fault.CodeInvalid, "the block has no digest: %v", err)
	}
	if digest != p.Block {
		return nil, divergedError(0, "the block is not the block that paused")
	}
	return r.runAtCall(ctx, req, p.Calls, &a)
}

// check is why p cannot be resumed: its calls are not the calls before
// its position, one names no tool or has an answer that is not JSON, or
// its digest is not its arguments'.
func (p *Pause) check() error {
	bad := func(format string, args ...any) error {
		return fault.Errorf(fault.CodeInvalid, "the pause cannot be resumed: "+format, args...).WithDetails("field", "pause")
	}
	if p.Position != len(p.Calls) {
		return bad("it is at call %d after %d calls", p.Position, len(p.Calls))
	}
	for i, c := range p.Calls {
		if c.Tool == "" {
			return bad("its call %d names no tool", i)
		}
		if !json.Valid(c.Response) {
			return bad("the answer of its call %d is not JSON", i)
		}
	}
	if d, err := jsonvalue.Digest(p.Arguments); err != nil || d != p.ArgsDigest {
		return bad("its arguments are not those of its digest")
	}
	return nil
}

// divergedError is the refusal of a resume that diverged at call at.
func divergedError(at int, detail string) error {
	return fault.Errorf(fault.CodeConflict, "the resumed run diverged at call %d: %s; nothing was dispatched", at, detail).
		WithDetails("reason", ReasonDiverged).WithDetails("call", at).WithDetails("detail", detail)
}

// runAtCall is RunAtCall (record and approval nil) and ResumeAtCall's
// run.
func (r *Replayer) runAtCall(ctx context.Context, req RunRequest, record []PausedCall, approval *CallApproval) (*AtCallResult, error) {
	b, d := req.Block, req.Decision
	digest, err := BlockDigest(b)
	if err != nil {
		return nil, fault.Errorf(fault.CodeInvalid, "the block has no digest: %v", err)
	}
	ctx, span := telemetry.Start(ctx, "procgraph.turn_run", telemetry.Procedure.String(b.Name), telemetry.CodeHash.String(d.CodeHash),
		telemetry.Decision.String(d.ID), telemetry.Phase.String(string(req.Request.Phase)))
	class := "internal"
	defer func() { telemetry.End(span, class) }()
	readOnly := readOnlyOf(b, req.Allowed)
	c := &chain{usageKey: req.UsageKey, bound: req.Bound, req: req.Request, pending: req.Pending}
	ch := c.push(b.Name)
	ac := &atCaller{
		reads:    &toolCaller{r: r, chain: ch, allowed: readOnly, dispatcher: r.dispatcher, catalogue: b.Catalogue},
		writes:   &toolCaller{r: r, chain: ch, dispatcher: r.dispatcher, catalogue: b.Catalogue},
		readOnly: readOnly, cat: b.Catalogue, record: record, approval: approval,
		calls: make([]PausedCall, 0, len(record)+1), values: make([]any, 0, len(record)+1), dispatched: []int{},
	}
	res := r.runner.Run(ctx, sandbox.Request{Filename: b.Name + ".star", Source: b.Analysis.Source, Args: b.Args,
		Allowed: req.Allowed, Limits: r.opts.Limits, Check: checkArgsIn(b.Catalogue)}, ac)
	switch {
	case ac.diverged != "":
		class = ReasonDiverged
		return nil, divergedError(ac.at, ac.diverged)
	case approval != nil && !ac.reached:
		// The first run reached the approved call; this one ended (or
		// failed) before it.
		class = ReasonDiverged
		return nil, divergedError(len(ac.calls), fmt.Sprintf("the run ended after %d calls, before the approved call %d", len(ac.calls), approval.Position))
	case ac.pause != nil:
		p := ac.pause
		p.Block = digest
		if e := res.Err; e != nil && e.Code == sandbox.Stopped && e.Tool == p.Tool {
			p.Line = e.Line
		}
		// The calls before a pause are kept within a recording's bounds.
		if _, err := recording.NewRecording(b.Name, b.Analysis.CodeHash, b.Arguments, rawCalls(p.Calls), nil, r.now()); err != nil {
			class = string(fault.CodeTooLarge)
			return nil, fault.Errorf(fault.CodeTooLarge, "the calls before tools.%s cannot be kept for a review at the call: %s", p.Tool, fault.ErrorMessage(err)).
				WithDetails("reason", "recording_too_large")
		}
		class = ""
		return &AtCallResult{Pause: p, Calls: ac.recorded(), Dispatched: ac.dispatched}, nil
	}
	out := resultOf(d, res)
	if r.opts.Counter != nil {
		r.opts.Counter.CountReplay(out.Status, out.ErrorCode())
	}
	out.Decision = req.Pending.result(d, !req.Deferred, res.Err)
	class = FailureClass(res.Err)
	return &AtCallResult{Result: out, Calls: ac.recorded(), Dispatched: ac.dispatched}, nil
}

// rawCalls are calls as recorded calls whose answers are their JSON as
// it is (what recording.NewRecording measures).
func rawCalls(calls []PausedCall) []recording.RecordedCall {
	out := make([]recording.RecordedCall, len(calls))
	for i, c := range calls {
		out[i] = recording.RecordedCall{Tool: c.Tool, Arguments: c.Arguments, Response: c.Response}
	}
	return out
}

// readOnlyOf is the read-only allow-set of b within allowed: what AllowSet
// permits b with a verdict that lets no state-changing tool run, and
// allowed permits too.
func readOnlyOf(b *Block, allowed []string) []string {
	ro := AllowSet(b.Analysis.Signature, b.Class, decide.Verdict{Outcome: audit.Allowed})
	return slices.DeleteFunc(ro, func(n string) bool { return !slices.Contains(allowed, n) })
}

// atCaller is the ToolCaller of a run at the call. It answers the calls of
// the record from it, in order, dispatches the approved call once and the
// reads as they come, and stops the run (sandbox.Stopped) at the first
// other call — a pause — or at the first call that is not the record's
// or the approval's — a divergence. After a stop it answers nothing.
type atCaller struct {
	reads    *toolCaller // allowed: the read-only allow-set
	writes   *toolCaller // allowed: set to the one approved tool at each dispatch
	readOnly []string
	cat      *procedures.Catalogue
	record   []PausedCall
	approval *CallApproval
	// reached: the run made the approved call.
	reached    bool
	calls      []PausedCall
	values     []any                   // each call's answer as the program got it
	failed     *recording.RecordedCall // the live call that failed, ending the run
	dispatched []int
	pause      *Pause
	diverged   string // why the run diverged ("" when it did not)
	at         int    // the call it diverged at
}

// CallTool answers call number len(calls) of the run.
func (c *atCaller) CallTool(ctx context.Context, name string, args map[string]any) (any, error) {
	if c.pause != nil || c.diverged != "" {
		return nil, stopped(name, "the run has stopped")
	}
	i := len(c.calls)
	digest, err := jsonvalue.Digest(args)
	if err != nil {
		return nil, &sandbox.Error{Code: sandbox.RuntimeError, Tool: name, Message: fmt.Sprintf("the arguments of tools.%s have no digest", name)}
	}
	switch {
	case i < len(c.record):
		return c.replayed(i, name, digest)
	case c.approval != nil && i == c.approval.Position:
		return c.approved(ctx, i, name, args, digest)
	case slices.Contains(c.readOnly, name):
		return c.live(ctx, c.reads, name, args)
	case c.approval != nil && c.approval.Rest:
		c.dispatched = append(c.dispatched, i)
		return c.live(ctx, c.only(name), name, args)
	}
	c.pause = &Pause{Position: i, Tool: name, Arguments: args, SchemaHash: c.cat.SchemaHash(name), ArgsDigest: digest,
		Calls: slices.Clone(c.calls)}
	return nil, stopped(name, fmt.Sprintf("the run paused before tools.%s for review", name))
}

// replayed answers call i from the record, when it is the recorded call.
func (c *atCaller) replayed(i int, name, digest string) (any, error) {
	want := c.record[i]
	if want.Tool != name {
		return c.diverge(i, name, fmt.Sprintf("call %d is tools.%s, the recorded one tools.%s", i, name, want.Tool))
	}
	if d, err := jsonvalue.Digest(want.Arguments); err != nil || d != digest {
		return c.diverge(i, name, fmt.Sprintf("call %d (tools.%s) has other arguments than the recorded one", i, name))
	}
	v, err := jsonvalue.Decode(want.Response)
	if err != nil {
		return c.diverge(i, name, fmt.Sprintf("the recorded answer of call %d (tools.%s) is not JSON", i, name))
	}
	c.calls, c.values = append(c.calls, want), append(c.values, v)
	return v, nil
}

// approved dispatches call i, when it is the approved call, once.
func (c *atCaller) approved(ctx context.Context, i int, name string, args map[string]any, digest string) (any, error) {
	a := c.approval
	switch {
	case name != a.Tool:
		return c.diverge(i, name, fmt.Sprintf("call %d is tools.%s, the approved one tools.%s", i, name, a.Tool))
	case c.cat.SchemaHash(name) != a.SchemaHash:
		return c.diverge(i, name, fmt.Sprintf("call %d (tools.%s): the tool's schema hash is not the approved one", i, name))
	case digest != a.ArgsDigest:
		return c.diverge(i, name, fmt.Sprintf("call %d (tools.%s) has other arguments than the approved ones", i, name))
	}
	c.reached = true
	c.dispatched = append(c.dispatched, i)
	return c.live(ctx, c.only(name), name, args)
}

// only is the ToolCaller that dispatches name and nothing else.
func (c *atCaller) only(name string) *toolCaller {
	c.writes.allowed = []string{name}
	return c.writes
}

// live dispatches a call through tc and records it as answered: its
// answer as the program gets it (normalised, as the sandbox does) in the
// encoding that gives it back exactly. A failed call ends the run; it is
// kept apart, for the run's recording.
func (c *atCaller) live(ctx context.Context, tc *toolCaller, name string, args map[string]any) (any, error) {
	out, err := tc.callTool(ctx, name, args)
	var raw []byte
	if err == nil {
		if out, err = jsonvalue.Normalize(out); err == nil {
			raw, err = sandbox.EncodeJSON(out)
		}
		if err != nil {
			err = &sandbox.Error{Code: sandbox.ToolFailed, Tool: name, Message: fmt.Sprintf("tools.%s returned a value that is not JSON", name)}
		}
	}
	if err != nil {
		c.failed = &recording.RecordedCall{Tool: name, Arguments: args, Error: err.Error()}
		return nil, err
	}
	c.calls, c.values = append(c.calls, PausedCall{Tool: name, Arguments: args, Response: raw}), append(c.values, out)
	return out, nil
}

// recorded is every call of the run as a recording keeps it, in order
// (the failed one last).
func (c *atCaller) recorded() []recording.RecordedCall {
	out := make([]recording.RecordedCall, 0, len(c.calls)+1)
	for i, pc := range c.calls {
		out = append(out, recording.RecordedCall{Tool: pc.Tool, Arguments: pc.Arguments, Response: c.values[i]})
	}
	if c.failed != nil {
		out = append(out, *c.failed)
	}
	return out
}

// diverge stops the run: it diverged at call i.
func (c *atCaller) diverge(i int, name, detail string) (any, error) {
	c.diverged, c.at = detail, i
	return nil, stopped(name, "the resumed run diverged")
}

func stopped(tool, msg string) *sandbox.Error {
	return &sandbox.Error{Code: sandbox.Stopped, Tool: tool, Message: msg}
}
