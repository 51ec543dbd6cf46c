package replay

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/binding"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/answer"
	"github.com/procgraph/procgraph/internal/telemetry"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/recording"
	"github.com/procgraph/procgraph/sandbox"
)

// chain is one top-level invoke and the nested replays it led to: the
// request every nested decision is taken for, the usage key every success
// counts under, and the path of procedures being run, outermost first.
//
// A nested replay is decided like a top-level one with the same phase,
// actor, reviewer and grant scope: a reviewer who approved the outer run
// approved the procedures it calls. Its own decision is recorded, its own
// arguments validated, its own allow-set applied, and its success counted
// under the same usage key (without the request's cause, which named the
// outer procedure).
//
// bound, when set, is the binding of the authorization the outermost run
// was allowed by (a session policy, an approved turn, a durable grant: its
// binding.Binding.Nested): a nested procedure that is not, right now,
// the one bound there is refused (nested_changed) before it is decided —
// what a reviewer approved does not cover a procedure they never saw.
type chain struct {
	req      InvokeRequest
	usageKey string
	path     []string
	bound    *binding.Binding
	// pending is what the run leaves to commit after it ran, every level
	// adding to it (Pending).
	pending *Pending
}

// push returns the chain one level deeper, running name.
func (c *chain) push(name string) *chain {
	return &chain{req: c.req, usageKey: c.usageKey, path: append(slices.Clip(c.path), name), bound: c.bound, pending: c.pending}
}

// toolCaller is the ToolCaller of one run: it re-checks the allow-set, sends
// proc__ calls to a nested replay and every other allowed call to the
// dispatcher.
type toolCaller struct {
	r          *Replayer // nil when there is no store (RunFile): proc__ calls are refused
	chain      *chain
	allowed    []string
	dispatcher Dispatcher
	// catalogue is the catalogue the run was decided and its calls'
	// arguments checked with: a CatalogueDispatcher routes by it.
	catalogue *procedures.Catalogue
	// recorded, when not nil, receives every call the run made and its
	// answer, in order (the run's recording).
	recorded []recording.RecordedCall
}

// CallTool performs one call the sandbox admitted, recording it when the
// run is recorded.
func (t *toolCaller) CallTool(ctx context.Context, name string, args map[string]any) (any, error) {
	out, err := t.callTool(ctx, name, args)
	if t.recorded != nil {
		c := recording.RecordedCall{Tool: name, Arguments: args, Response: out}
		if err != nil {
			c.Response, c.Error = nil, err.Error()
		}
		t.recorded = append(t.recorded, c)
	}
	return out, err
}

// callTool is CallTool without the recording.
func (t *toolCaller) callTool(ctx context.Context, name string, args map[string]any) (any, error) {
	// The sandbox's gate already refused names outside the allow-set; this
	// second check keeps the boundary if a Runner ever gets it wrong.
	if !slices.Contains(t.allowed, name) {
		return nil, refused(name, "tools.%s is not in this run's allow-set", name)
	}
	if procedures.IsProcName(name) {
		if t.r == nil {
			return nil, refused(name, "%s is a procedure, and procedures cannot be called here", name)
		}
		return t.r.callNested(ctx, t.chain, name, args)
	}
	if t.dispatcher == nil {
		return nil, &sandbox.Error{Code: sandbox.ToolFailed, Tool: name, Message: "no upstream tool server is configured"}
	}
	ctx, span := telemetry.Start(ctx, "procgraph.tool_call", telemetry.Tool.String(name))
	start := time.Now()
	var out any
	var err error
	if cd, ok := t.dispatcher.(CatalogueDispatcher); ok && t.catalogue != nil {
		out, err = cd.DispatchWith(ctx, t.catalogue, name, args)
	} else {
		out, err = t.dispatcher.Dispatch(ctx, name, args)
	}
	class := ""
	if err != nil {
		// The span names the call's failure as a run's is named
		// (FailureClass): an upstream error is tool_error.
		se, ok := errors.AsType[*sandbox.Error](err)
		if !ok {
			se = &sandbox.Error{Code: sandbox.ToolFailed}
		}
		class = FailureClass(se)
	}
	telemetry.End(span, class)
	t.countCall(name, class, start)
	return out, err
}

func refused(tool, format string, args ...any) *sandbox.Error {
	return &sandbox.Error{Code: sandbox.ToolRefused, Tool: tool, Message: fmt.Sprintf(format, args...)}
}

// callNested replays the procedure name called from the run at the end of
// c.path. A cycle or a nesting deeper than procedures.MaxNesting is
// recorded as a denied decision (reason cycle or nesting_too_deep) and
// refused; so is a nested replay whose decision denies it. Invalid arguments
// fail the call with tool_failed (no decision, as for a top-level invoke). A
// nested run that fails fails the call with the nested error's code.
func (r *Replayer) callNested(ctx context.Context, c *chain, name string, args map[string]any) (any, error) {
	level := len(c.path) // the callee's level: the outermost run is level 0
	if slices.Contains(c.path, name) || level > procedures.MaxNesting {
		reason, why := audit.ReasonNestingTooDeep, fmt.Sprintf("procedures nest more than %d deep", procedures.MaxNesting)
		if slices.Contains(c.path, name) {
			reason, why = audit.ReasonCycle, "cycle "+strings.Join(append(slices.Clip(c.path), name), " -> ")
		}
		if err := r.recordStructuralDenial(ctx, c, name, reason); err != nil {
			return nil, &sandbox.Error{Code: sandbox.RuntimeError, Tool: name, Message: name + " could not be decided"}
		}
		return nil, refused(name, "%s refused: %s", name, why)
	}
	res, err := r.replay(ctx, c, name, args, "")
	if err != nil {
		return nil, nestedError(name, err)
	}
	if res.Error != nil {
		e := *res.Error
		e.Message = name + " failed: " + e.Message
		e.Tool = name
		return nil, &e
	}
	return res.Result, nil
}

// recordStructuralDenial records the denial of a nested call refused for
// its place in the chain, bound to the callee's current code hash.
func (r *Replayer) recordStructuralDenial(ctx context.Context, c *chain, name, reason string) error {
	hash := ""
	if p, err := r.svc.Get(ctx, name); err == nil {
		hash = p.CodeHash
	}
	d := audit.Decision{Kind: audit.KindInvoke, Procedure: name, CodeHash: hash, Phase: c.req.Phase,
		Outcome: audit.Denied, Reason: reason, Actor: c.req.Actor, AllowedTools: []string{}}
	_, err := r.record(ctx, d)
	return err
}

// nestedError turns an error of a nested invoke (before it ran) into the
// failure of the tool call that asked for it. The run's result reaches the
// caller, so only the error's public form (answer.Of) goes into it.
func nestedError(name string, err error) *sandbox.Error {
	a := answer.Of(err)
	switch a.Code {
	case fault.CodeDenied:
		reason := ""
		if d, ok := audit.DecisionOf(err); ok {
			reason = d.Reason
		}
		return refused(name, "%s was denied: %s", name, reason)
	case fault.CodeInvalidArguments:
		return &sandbox.Error{Code: sandbox.ToolFailed, Tool: name, Message: a.Message}
	case fault.CodeNotFound:
		return &sandbox.Error{Code: sandbox.ToolFailed, Tool: name, Message: "no procedure " + name}
	}
	return &sandbox.Error{Code: sandbox.RuntimeError, Tool: name, Message: name + ": " + a.Message}
}

// refuseNested records and returns the denial (reason nested_changed) of a
// nested replay whose procedure is not the one the chain's authorization
// bound (chain.bound): nothing of it runs.
func (r *Replayer) refuseNested(ctx context.Context, c *chain, prep *prepared) error {
	d := audit.Decision{Kind: audit.KindInvoke, Procedure: prep.p.Name, CodeHash: prep.p.CodeHash, Phase: c.req.Phase,
		Outcome: audit.Denied, Reason: binding.ReasonNestedChanged, Actor: c.req.Actor, AllowedTools: []string{},
		Note: BindingNote(c.bound)}
	d, err := r.record(ctx, d)
	if err != nil {
		return err
	}
	return deniedError(d)
}
