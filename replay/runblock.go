package replay

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/binding"
	"github.com/procgraph/procgraph/internal/telemetry"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/recording"
	"github.com/procgraph/procgraph/sandbox"
)

// Service is the procedures service the Replayer reads and records
// through, for the gate built over it.
func (r *Replayer) Service() *procedures.Service { return r.whole }

// Now is the Replayer's clock (Options.Now).
func (r *Replayer) Now() time.Time { return r.now() }

// Timeout is the time a request has from its arrival to its answer: the
// run limit's, else sandbox.DefaultTimeout.
func (r *Replayer) Timeout() time.Duration { return r.timeout() }

// Logger is Options.Logger.
func (r *Replayer) Logger() *zerolog.Logger { return &r.log }

// Record records d through the service's Recorder (built, checked against
// the audit rule, stored, counted) and logs it; nothing runs unless it
// was stored.
func (r *Replayer) Record(ctx context.Context, d audit.Decision) (audit.Decision, error) {
	return r.record(ctx, d)
}

// Build builds d through the service's Recorder (checked against the
// audit rule) and logs it, without storing it: a decision that need not be
// durable before its run (decide.Verdict.DurableFirst) is stored with
// the run's result (RunRequest.Deferred, Pending).
func (r *Replayer) Build(d audit.Decision) (audit.Decision, error) {
	return r.build(d)
}

// Admit takes an admission slot for actor (Options.Admission; none is
// taken without one): a refusal is CodeBusy (reason replay_queue) and
// nothing may run. release gives the slot back.
func (r *Replayer) Admit(ctx context.Context, actor string) (release func(), err error) {
	a := r.opts.Admission
	if a == nil {
		return func() {}, nil
	}
	release, err = a.Acquire(ctx, actor)
	if err != nil {
		return nil, busyError(err)
	}
	return release, nil
}

// RunRequest is an allowed block to run outside an invoke (a turn): its
// recorded decision and allow-set, the request its nested replays are
// decided for, the usage key their successes count under, and the binding
// of the authorization that allowed it (nil: none), which nested
// procedures must still match.
type RunRequest struct {
	Block    *Block
	Decision audit.Decision
	Allowed  []string
	Request  InvokeRequest
	UsageKey string
	Bound    *binding.Binding
	// Deferred says Decision was built, not stored (Build): it is stored
	// with the run's result. Otherwise it was stored before the run.
	Deferred bool
	// Pending receives what the run leaves (the decision's result, nested
	// replays' records and uses); the caller adds the run's own use and
	// commits it (Commit).
	Pending *Pending
}

// RunBlock runs an allowed block in the sandbox with its allow-set, its
// tool calls dispatched and its proc__ calls replayed as nested replays,
// and counts the run (Options.Counter). With Options.RecordResponses, a
// run that succeeded also returns its tool calls as they were answered
// (what a recording keeps: Recording); nil otherwise.
func (r *Replayer) RunBlock(ctx context.Context, req RunRequest) (*InvokeResult, []recording.RecordedCall) {
	b := req.Block
	d := req.Decision
	ctx, span := telemetry.Start(ctx, "procgraph.turn_run", telemetry.Procedure.String(b.Name), telemetry.CodeHash.String(d.CodeHash),
		telemetry.Decision.String(d.ID), telemetry.Outcome.String(string(d.Outcome)), telemetry.Reason.String(string(d.Reason)),
		telemetry.Phase.String(string(req.Request.Phase)))
	class := "internal"
	defer func() { telemetry.End(span, class) }()
	c := &chain{usageKey: req.UsageKey, bound: req.Bound, req: req.Request, pending: req.Pending}
	tc := &toolCaller{r: r, chain: c.push(b.Name), allowed: req.Allowed, dispatcher: r.dispatcher, catalogue: b.Catalogue}
	if r.opts.RecordResponses {
		tc.recorded = []recording.RecordedCall{}
	}
	res := r.runner.Run(ctx, sandbox.Request{Filename: b.Name + ".star", Source: b.Analysis.Source, Args: b.Args,
		Allowed: req.Allowed, Limits: r.opts.Limits, Check: checkArgsIn(b.Catalogue)}, tc)
	out := resultOf(req.Decision, res)
	if r.opts.Counter != nil {
		r.opts.Counter.CountReplay(out.Status, out.ErrorCode())
	}
	out.Decision = req.Pending.result(req.Decision, !req.Deferred, res.Err)
	class = FailureClass(res.Err)
	if res.Err != nil {
		return out, nil
	}
	return out, tc.recorded
}

// Kept is what a successful run of the version codeHash of name with args,
// whose tool calls were calls and whose result was value, keeps
// (procedures.Kept): its recording, unless it is not kept (too large, or
// not JSON: counted either way), or calls is nil.
func (r *Replayer) Kept(name, codeHash string, args map[string]any, calls []recording.RecordedCall, value any) procedures.Kept {
	k := procedures.Kept{PerVersion: r.opts.RecordingsPerVersion}
	if calls != nil {
		k.Recording = r.recording(name, codeHash, args, calls, value)
	}
	return k
}

// RecordsResponses reports whether the replayer keeps recordings of
// successful runs (Options.RecordResponses).
func (r *Replayer) RecordsResponses() bool { return r.opts.RecordResponses }

// BindingNote is how a decision names the binding of the authorization
// that allowed it (binding.Binding.Hash).
func BindingNote(b *binding.Binding) string { return "binding " + b.Hash() }
