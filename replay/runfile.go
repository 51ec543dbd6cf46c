package replay

import (
	"context"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/decide"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/sandbox"
)

// RunFileRequest is a block to run without a store, for the offline CLI
// (`procgraph run FILE`).
type RunFileRequest struct {
	Code    string
	Dialect string // "starlark" (default) or "python-async"
	// Catalogue classifies the block's tools; nil is an empty catalogue,
	// under which every tool is unknown and nothing may run.
	Catalogue *procedures.Catalogue
	// Phase defaults to interactive: the author at a terminal is watching.
	Phase     audit.Phase
	Arguments map[string]any
	// ParamsSchema optionally refines the input schema (as at capture).
	ParamsSchema map[string]any
	// AllowMutating lets state-changing catalogue tools run in the
	// interactive phase: the author running their own file counts as the
	// operator who reviewed it (reason operator_reviewed, actor "local").
	// Off, a state-changing block is denied with state_changing_disabled.
	AllowMutating bool
	Limits        sandbox.Limits
	Runner        sandbox.Runner // required
	Dispatcher    Dispatcher     // nil: every allowed call fails with tool_failed
	// Recorder records the decision; nil is an offline recorder, which
	// builds and checks it as everywhere and stores it nowhere.
	Recorder *procedures.Recorder
}

// RunFile prepares code as FileBlock does (the name included) with its
// arguments (Block), decides as for
// an invoke of a succeeded version without a grant (see
// RunFileRequest.AllowMutating), and runs it. Nested proc__ references are
// unknown without a store: they are never in the allow-set. The decision
// goes through req.Recorder (by default built and checked, stored nowhere). Errors: CodeInvalid (phase, dialect, no
// runner), CodeInvalidCode or CodeTooLarge (the code), CodeInvalidArguments,
// CodeDenied with details "decision".
func RunFile(ctx context.Context, req RunFileRequest) (*InvokeResult, error) {
	if req.Runner == nil {
		return nil, fault.Errorf(fault.CodeInvalid, "a sandbox runner is required")
	}
	if req.Phase == "" {
		req.Phase = audit.PhaseInteractive
	}
	if !req.Phase.Valid() {
		return nil, fault.Errorf(fault.CodeInvalid, "phase %q is not automatic or interactive", req.Phase).WithDetails("field", "phase")
	}
	b, err := FileBlock(req.Code, req.Dialect, req.Catalogue)
	if err != nil {
		return nil, analysisError(err, req.Dialect)
	}
	schema, err := compileInputSchema(b.Analysis.Parameters, req.ParamsSchema)
	if err != nil {
		return nil, err
	}
	if err := b.bind(schema, req.Arguments); err != nil {
		return nil, err
	}
	a, c := b.Analysis, b.Class
	in := decide.DecisionInput{Phase: req.Phase, Succeeded: true, ReadOnly: c.ReadOnly, Problem: c.Problem, AllowMutating: req.AllowMutating}
	if req.AllowMutating {
		in.ReviewedBy, in.ReviewerHasGrantScope = localActor, true
	}
	v := decide.Decide(in)
	allowed := AllowSet(a.Signature, c, v)
	rec := req.Recorder
	if rec == nil {
		rec = procedures.NewRecorder(nil, procedures.RecorderOptions{})
	}
	d, err := rec.Record(ctx, audit.Decision{Kind: audit.KindInvoke, Procedure: b.Name,
		CodeHash: a.CodeHash, Phase: req.Phase, Outcome: v.Outcome, Reason: v.Reason, Actor: localActor,
		AllowedTools: allowed, Suggestion: v.Suggestion})
	if err != nil {
		return nil, err
	}
	if !v.Allowed() {
		return nil, deniedError(d)
	}
	tc := &toolCaller{allowed: allowed, dispatcher: req.Dispatcher}
	res := req.Runner.Run(ctx, sandbox.Request{Filename: b.Name + ".star", Source: a.Source, Args: b.Args, Allowed: allowed, Limits: req.Limits,
		Check: checkArgsIn(b.Catalogue)}, tc)
	// The run happened: a result its recorder cannot store does not undo it.
	d, _ = rec.SetResult(ctx, d, FailureClass(res.Err))
	return resultOf(d, res), nil
}

// localActor is the actor of RunFile's decisions.
const localActor = "local"
