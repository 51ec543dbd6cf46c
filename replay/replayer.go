package replay

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/attribute"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/changes"
	"github.com/procgraph/procgraph/decide"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/internal/telemetry"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/recording"
	"github.com/procgraph/procgraph/sandbox"
	"github.com/procgraph/procgraph/signature"
	"github.com/procgraph/procgraph/usage"
)

// Options configure a Replayer.
type Options struct {
	// Limits bound every run, nested ones included (each nested run has its
	// own limits, within the time left to the run that called it). With a
	// sandbox.Pool, MaxMemory should equal the pool's MaxMemory, else every
	// run gets a one-off worker.
	Limits sandbox.Limits
	// Logger receives one event per decision and per run: procedure, code
	// hash, phase, outcome, reason, actor, status, error code, duration.
	// Never arguments, code, output or results. Zero value: silent.
	Logger zerolog.Logger
	// NestedRunner runs nested proc__ replays; the Replayer's runner when nil.
	// With a Pool, a nested run takes a second worker while its caller's
	// worker waits (a chain holds at most MaxNesting+1 workers); if the pool
	// is at MaxWorkers the nested run waits for a worker within the caller's
	// deadline and fails with timeout, never deadlocks.
	NestedRunner sandbox.Runner
	// Admission, when set, admits every top-level invoke before anything
	// else happens (docs/design.md "Admission and deadlines"), keyed by the
	// request's actor (the token holder); a refusal is CodeBusy and
	// nothing is decided or run. Nested replays are part of their
	// top-level invoke and are not admitted again.
	Admission *sandbox.Admission
	// Counter, when set, counts every replay that ran, nested ones
	// included, by status and error code (metrics.Registry is one). The
	// decisions are counted by the service's Recorder.
	Counter ReplayCounter
	// Now is the clock of deadlines and records; time.Now when nil.
	Now func() time.Time
	// RecordResponses keeps a recording of every successful run of a
	// stored version (docs/design.md "Verification against recorded tool
	// responses"), RecordingsPerVersion (1 to
	// recording.MaxRecordingsPerVersion; the default when 0) per version,
	// in the write that counts the run.
	RecordResponses      bool
	RecordingsPerVersion int
}

// RecordingCounter, when the Counter is one too, counts the recordings of
// successful runs by outcome (kept, too_large, unencodable) and the bytes
// of those kept. It must not block.
type RecordingCounter interface {
	CountRecording(outcome string, bytes int)
}

// ReplayCounter counts replays that ran. It must not block.
type ReplayCounter interface {
	CountReplay(status, errorCode string)
}

// Service is what the Replayer asks of the domain (*procedures.Service):
// one interface for what it reads, one for what it records.
type Service interface {
	ReadService
	RecordService
}

// ReadService is what the Replayer reads through the domain: procedures,
// versions, the catalogue, the exposed tools, a block's classification.
type ReadService interface {
	Get(ctx context.Context, name string) (*procedures.Procedure, error)
	GetForRun(ctx context.Context, name string) (*procedures.Procedure, *procedures.Catalogue, error)
	Version(ctx context.Context, name, codeHash string) (*procedures.Version, error)
	VersionView(ctx context.Context, name, codeHash string) (*procedures.Version, error)
	VersionRecordings(ctx context.Context, name, codeHash string) ([]recording.Recording, error)
	Catalogue(ctx context.Context) (*procedures.Catalogue, error)
	ExposedMatching(ctx context.Context, q string, causes []string, limit int) ([]*procedures.Procedure, error)
	StaleVersions(ctx context.Context) ([]procedures.StaleVersion, error)
	ClassifyBlock(ctx context.Context, a *signature.Analysis) (*procedures.Classified, error)
	AllowMutatingAutorun() bool
}

// RecordService is what the Replayer records through the domain: a
// run's use and its one commit, decisions and their results, verifications, drift cleared, and the
// change feed it watches.
type RecordService interface {
	RunUse(name, codeHash, usageKey, cause string, run *health.Run, k procedures.Kept) (procedures.UseInput, bool)
	CommitRunWith(ctx context.Context, rr procedures.RunRecord, write func(procedures.RunRecord) ([]procedures.UseResult, error)) (bool, error)
	Recorder() *procedures.Recorder
	SetVerification(ctx context.Context, name, codeHash string, v recording.Verification) error
	LiftVerified(ctx context.Context, name, codeHash, revision string, recordings int) (bool, error)
	ClearDrift(ctx context.Context, name, codeHash, revision string) error
	Changes() *changes.Feed
}

var _ Service = (*procedures.Service)(nil)

// Replayer replays stored procedures: one recorded decision per invoke, a
// run in the sandbox with the decision's allow-set, nested proc__ replays,
// and counting of successful replays. It is safe for concurrent use.
type Replayer struct {
	svc Service
	// whole is the service svc is, handed to the gate built over this
	// Replayer (Service).
	whole      *procedures.Service
	runner     sandbox.Runner
	nested     sandbox.Runner
	dispatcher Dispatcher
	opts       Options
	log        zerolog.Logger
	schemas    *schemaCache
	analyses   analysisCache
	now        func() time.Time
	// preparations counts the blocks this Replayer prepared (PrepareBlock,
	// prepare): what a test of "prepared once" reads.
	preparations atomic.Int64
}

// New returns a Replayer reading and recording through svc, running blocks
// in runner and sending allowed tool calls to d.
func New(svc *procedures.Service, runner sandbox.Runner, d Dispatcher, opts Options) *Replayer {
	nested := opts.NestedRunner
	if nested == nil {
		nested = runner
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Replayer{schemas: newSchemaCache(), svc: svc, whole: svc, runner: runner, nested: nested, dispatcher: d, opts: opts, log: opts.Logger, now: now}
}

// InvokeRequest is one replay request.
type InvokeRequest struct {
	Name           string
	Arguments      map[string]any
	Phase          audit.Phase
	SessionID      string
	IdempotencyKey string
	// Cause, when set, links the procedure to the cause on success.
	Cause string
	// ReviewedBy names the operator who reviewed this run. It counts only
	// when ReviewerHasGrantScope: the caller holds the grant scope.
	ReviewedBy            string
	ReviewerHasGrantScope bool
	// Actor is who asks (the audit record's actor); "anonymous" when empty.
	Actor string
}

// The statuses of a replay that ran.
const (
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
)

// InvokeResult is a replay that was allowed and ran: docs/api.md's 200 body.
type InvokeResult struct {
	Decision audit.Decision `json:"decision"`
	Status   string         `json:"status"`
	Result   any            `json:"result"`
	Output   string         `json:"output"`
	Calls    []sandbox.Call `json:"calls"`
	Error    *sandbox.Error `json:"error"`
}

// Invoke replays the current version of the procedure req.Name. In order:
// it validates the request (CodeInvalid), loads the procedure (CodeNotFound),
// re-analyses the stored code, validates the arguments against the input
// schema (CodeInvalidArguments with details "errors"; no decision), takes and
// records exactly one decision (a failure to record it runs nothing), and
// returns CodeDenied with details "decision" (and "suggestion") when denied.
// An allowed replay runs and answers an InvokeResult, succeeded or failed; a
// succeeded one is counted under the request's usage key.
func (r *Replayer) Invoke(ctx context.Context, req InvokeRequest) (*InvokeResult, error) {
	if err := validateRequest(&req); err != nil {
		return nil, err
	}
	// One absolute deadline, fixed now: the wait for admission and for a
	// worker, the decision and the run (nested ones included) all count
	// against it.
	ctx, cancel := context.WithDeadline(ctx, r.now().Add(r.timeout()))
	defer cancel()
	if a := r.opts.Admission; a != nil {
		release, err := a.Acquire(ctx, req.Actor)
		if err != nil {
			return nil, busyError(err)
		}
		defer release()
	}
	c := &chain{usageKey: usage.UsageKey(req.SessionID, req.IdempotencyKey), req: req, pending: &Pending{}}
	return r.replay(ctx, c, req.Name, req.Arguments, req.Cause)
}

// timeout is the time a request has from its arrival to its answer.
func (r *Replayer) timeout() time.Duration {
	if t := r.opts.Limits.Timeout; t > 0 {
		return t
	}
	return sandbox.DefaultTimeout
}

// busyError turns an admission refusal into CodeBusy (details: reason
// replay_queue, the limit that refused, retry_after_seconds); another
// error (the caller went away while waiting) is CodeUnavailable.
func busyError(err error) error {
	var b *sandbox.Busy
	if !errors.As(err, &b) {
		return fault.Errorf(fault.CodeUnavailable, "the request ended while waiting for a sandbox worker: nothing ran")
	}
	return fault.Errorf(fault.CodeBusy, "%s: nothing ran", b.Message).
		WithDetails("reason", fault.ReasonReplayQueue).WithDetails("limit", b.Limit).
		WithDetails(fault.DetailRetryAfter, b.RetryAfterSeconds())
}

// validateRequest checks the fields and fills the defaults.
func validateRequest(req *InvokeRequest) error {
	if req.Name == "" {
		return fault.Errorf(fault.CodeInvalid, "the procedure name is required").WithDetails("field", "name")
	}
	if !req.Phase.Valid() {
		return fault.Errorf(fault.CodeInvalid, "phase %q is not automatic or interactive", req.Phase).WithDetails("field", "phase")
	}
	if req.SessionID != "" {
		if err := usage.CheckSessionID(req.SessionID); err != nil {
			return err
		}
	}
	if err := usage.CheckIdempotencyKey(req.IdempotencyKey); err != nil {
		return err
	}
	for _, f := range []struct{ field, value string }{
		{"name", req.Name},
		{"cause", req.Cause}, {"reviewed_by", req.ReviewedBy}, {"actor", req.Actor},
	} {
		if len(f.value) > fields.MaxKeyBytes {
			return fault.Errorf(fault.CodeInvalid, "%s is longer than %d bytes", f.field, fields.MaxKeyBytes).WithDetails("field", f.field)
		}
		if !utf8.ValidString(f.value) {
			return fault.Errorf(fault.CodeInvalid, "%s is not valid UTF-8", f.field).WithDetails("field", f.field)
		}
	}
	if req.Actor == "" {
		req.Actor = "anonymous"
	}
	return nil
}

// prepared is a procedure ready to decide on: its stored code prepared
// (b: re-analysed, classified by the current catalogue, its arguments
// validated and bound).
type prepared struct {
	p    *procedures.Procedure
	b    *Block
	succ bool
}

// prepare loads name's current version, re-analyses its code and validates
// args: the pipeline of Block on a stored version, classified as the
// service decorated the procedure. Nothing is recorded.
func (r *Replayer) prepare(ctx context.Context, name string, args map[string]any) (*prepared, error) {
	r.preparations.Add(1)
	// p carries its current version (code, dialect, status, input schema)
	// from the same read: the code that runs is the code whose hash is
	// checked below.
	p, cat, err := r.svc.GetForRun(ctx, name)
	if err != nil {
		return nil, err
	}
	b, err := r.analyses.analyse(p.Code, p.Dialect)
	if err != nil || b.Analysis.CodeHash != p.CodeHash || !slices.Equal(b.Analysis.Signature, p.Signature) {
		r.log.Error().Err(err).Str("procedure", name).Str("code_hash", p.CodeHash).
			Msg("replay: the stored code does not analyse to the stored procedure; refusing to run it")
		return nil, fault.Errorf(fault.CodeInternal, "the stored code of %s does not match its procedure; it will not run", name)
	}
	// p's input schema is the version's, typed from the current catalogue;
	// the version's own, read only then, is the fallback.
	a := b.Analysis
	schema, err := r.schemas.getTyped(a.CodeHash, a.Parameters, p.InputSchema, func() (map[string]any, error) {
		v, err := r.svc.Version(ctx, name, p.CodeHash)
		if err != nil {
			return nil, err
		}
		return v.InputSchema, nil
	})
	if err != nil {
		r.log.Error().Err(err).Str("procedure", name).Str("code_hash", p.CodeHash).Msg("replay: the stored input schema does not compile")
		return nil, fault.Errorf(fault.CodeInternal, "the input schema of %s does not compile", name)
	}
	b.Name, b.Class, b.Catalogue = name, classificationOf(p), cat
	if err := b.bind(schema, args); err != nil {
		return nil, err
	}
	return &prepared{p: p, b: b, succ: p.Status == procedures.StatusSucceeded}, nil
}

// decide takes the decision on prep for the request of c. A decision
// that must be durable first (decide.Verdict.DurableFirst) is stored
// before anything runs, and failing to store it is an error (nothing
// runs); any other is built (stored reports false) and stored with the
// run's result after it ran (Pending).
func (r *Replayer) decide(ctx context.Context, c *chain, prep *prepared) (_ audit.Decision, _ decide.Verdict, allowed []string, stored bool, _ error) {
	req := c.req
	v := decide.Decide(decide.DecisionInput{
		Phase:                 req.Phase,
		Retired:               prep.p.Retired != nil,
		Demoted:               prep.p.Demoted,
		Succeeded:             prep.succ,
		ReadOnly:              prep.p.ReadOnly,
		Problem:               prep.p.Problem,
		UnknownTools:          prep.p.UnknownTools,
		AllowMutating:         r.svc.AllowMutatingAutorun(),
		GrantActive:           prep.p.AutoRun.Active,
		ReviewedBy:            req.ReviewedBy,
		ReviewerHasGrantScope: req.ReviewerHasGrantScope,
	})
	allowed = AllowSet(prep.b.Analysis.Signature, prep.b.Class, v)
	d := audit.Decision{
		Kind: audit.KindInvoke, Procedure: prep.p.Name, CodeHash: prep.p.CodeHash, Phase: req.Phase,
		Outcome: v.Outcome, Reason: v.Reason, Actor: req.Actor, AllowedTools: allowed, Suggestion: v.Suggestion,
	}
	switch v.Reason {
	case audit.ReasonOperatorReviewed:
		d.Note = "reviewed by " + req.ReviewedBy
		if c.bound != nil { // a nested call of a run an authorization allowed
			d.Note += ", " + BindingNote(c.bound)
		}
	case audit.ReasonDurableAutoRun:
		d.Note = BindingNote(prep.p.Grant.Binding)
	}
	if !v.DurableFirst() {
		d, err := r.build(d)
		return d, v, allowed, false, err
	}
	d, err := r.record(ctx, d)
	return d, v, allowed, true, err
}

// record records d through the service's Recorder (built, checked against
// the audit rule, stored, counted) and logs it.
func (r *Replayer) record(ctx context.Context, d audit.Decision) (audit.Decision, error) {
	rec, err := r.svc.Recorder().Record(ctx, d)
	if err != nil {
		r.log.Error().Err(err).Str("procedure", d.Procedure).Str("code_hash", d.CodeHash).Str("reason", d.Reason).
			Msg("replay: the decision could not be recorded; nothing runs")
		return audit.Decision{}, err
	}
	r.logDecision(rec)
	return rec, nil
}

// logDecision logs the decision d.
func (r *Replayer) logDecision(d audit.Decision) {
	r.log.Info().Str("decision", d.ID).Str("procedure", d.Procedure).Str("code_hash", d.CodeHash).
		Str("phase", string(d.Phase)).Str("outcome", string(d.Outcome)).Str("reason", d.Reason).
		Str("actor", d.Actor).Strs("allowed_tools", d.AllowedTools).Msg("replay decision")
}

// build builds d through the service's Recorder (checked against the
// audit rule, not stored: it is stored with its run's result, Pending)
// and logs it.
func (r *Replayer) build(d audit.Decision) (audit.Decision, error) {
	b, err := r.svc.Recorder().Build(d)
	if err != nil {
		r.log.Error().Err(err).Str("procedure", d.Procedure).Str("code_hash", d.CodeHash).Str("reason", d.Reason).
			Msg("replay: the decision could not be built; nothing runs")
		return audit.Decision{}, err
	}
	r.logDecision(b)
	return b, nil
}

// deniedError is the CodeDenied error of a denied decision.
func deniedError(d audit.Decision) error {
	e := fault.Errorf(fault.CodeDenied, "the replay of %s was denied: %s", d.Procedure, d.Reason).WithDetails(fault.DetailDecision, d)
	if d.Suggestion != "" {
		e = e.WithDetails("suggestion", d.Suggestion)
	}
	return e
}

// replay prepares, decides and runs one procedure, top-level or nested.
func (r *Replayer) replay(ctx context.Context, c *chain, name string, args map[string]any, cause string) (_ *InvokeResult, err error) {
	ctx, span := telemetry.Start(ctx, "procgraph.replay", telemetry.Procedure.String(name),
		telemetry.Phase.String(string(c.req.Phase)), attribute.Int("procgraph.depth", len(c.path)))
	class := ""
	defer func() {
		if err != nil {
			class = string(fault.ErrorCode(err))
		}
		telemetry.End(span, class)
	}()
	began := r.now()
	prep, err := r.prepare(ctx, name, args)
	if fault.ErrorCode(err) == fault.CodeInternal {
		// An error while deciding is a denial, and recorded as one (best
		// effort: the store may be what failed).
		_ = r.recordStructuralDenial(ctx, c, name, audit.ReasonDecisionError)
	}
	if err != nil {
		return nil, err
	}
	if len(c.path) > 0 && procedures.CheckNested(c.bound, name, prep.p) != "" {
		return nil, r.refuseNested(ctx, c, prep)
	}
	d, v, allowed, stored, err := r.decide(ctx, c, prep)
	if err != nil {
		return nil, err
	}
	span.SetAttributes(telemetry.CodeHash.String(d.CodeHash), telemetry.Decision.String(d.ID),
		telemetry.Outcome.String(string(d.Outcome)), telemetry.Reason.String(string(d.Reason)))
	if d.Outcome != audit.Allowed {
		return nil, deniedError(d)
	}
	if v.Reason == audit.ReasonDurableAutoRun && prep.p.Grant != nil {
		span.SetAttributes(telemetry.Grant.String(prep.p.Grant.CodeHash))
	}
	if len(c.path) == 0 && v.Reason == audit.ReasonDurableAutoRun {
		c = &chain{req: c.req, usageKey: c.usageKey, bound: prep.p.Grant.Binding, pending: c.pending}
	}
	runner := r.runner
	if len(c.path) > 0 {
		runner = r.nested
	}
	tc := &toolCaller{r: r, chain: c.push(name), allowed: allowed, dispatcher: r.dispatcher, catalogue: prep.b.Catalogue}
	if r.opts.RecordResponses {
		tc.recorded = []recording.RecordedCall{}
	}
	start := r.now()
	res := runner.Run(ctx, sandbox.Request{
		Filename: name + ".star", Source: prep.b.Analysis.Source, Args: prep.b.Args, Allowed: allowed, Limits: r.opts.Limits,
		Check: checkArgsIn(prep.b.Catalogue),
	}, tc)
	out := resultOf(d, res)
	class = FailureClass(res.Err)
	if r.opts.Counter != nil {
		r.opts.Counter.CountReplay(out.Status, out.ErrorCode())
	}
	ran := r.now().Sub(start)
	out.Decision = c.pending.result(d, stored, res.Err)
	ev := r.log.Info()
	if res.Err != nil {
		ev = ev.Str("error_code", string(res.Err.Code)).Str("error_tool", loggedTool(res.Err.Tool, prep.b.Analysis.Signature))
	}
	// The run's event, sent once it is committed: duration is the run's,
	// prepared the time before it (prepare and decide), commit the one
	// commit's after it (top level only).
	ev = ev.Str("decision", d.ID).Str("procedure", name).Str("code_hash", d.CodeHash).Str("status", out.Status).
		Int("calls", len(out.Calls)).Dur("duration", ran).Dur("prepared", start.Sub(began)).Int("depth", len(c.path))
	// The run happened: count it in the version's health (and a success
	// as a replay) even if the request's deadline or its caller is gone by
	// now.
	run := &health.Run{Failure: FailureClass(res.Err), Duration: ran, Caller: c.req.Actor}
	var kept procedures.Kept
	if res.Err == nil {
		kept = r.Kept(name, d.CodeHash, prep.b.Args, tc.recorded, res.Value)
	}
	if in, ok := r.svc.RunUse(name, d.CodeHash, c.usageKey, cause, run, kept); ok {
		c.pending.Use(in)
	}
	if len(c.path) == 0 {
		// One commit after the run: its records, results and uses, nested
		// replays' included (Pending).
		committing := r.now()
		err := r.Commit(ctx, c.pending)
		ev = ev.Dur("commit", r.now().Sub(committing))
		if err != nil {
			ev.Msg("replay run")
			return nil, err
		}
	}
	ev.Msg("replay run")
	if out.Status == StatusSucceeded {
		if prep.p.Stale && d.CodeHash == prep.p.CodeHash {
			// It worked under the catalogue it was prepared with: its
			// drift is cleared (docs/design.md "Drift").
			if err := r.svc.ClearDrift(context.WithoutCancel(ctx), name, d.CodeHash, prep.p.DriftRevision); err != nil {
				r.log.Warn().Err(err).Str("procedure", name).Str("code_hash", d.CodeHash).Msg("replay: a successful replay could not clear the version's drift")
			}
		}
	}
	return out, nil
}

// loggedTool is how a run's error names its tool in the log: a name of the
// signature as it is (it is in the decision record too); any other name
// was built at run time (getattr on tools) from program data — an argument
// value, say — and is never logged.
func loggedTool(tool string, signature []string) string {
	if tool == "" || slices.Contains(signature, tool) {
		return tool
	}
	return "(dynamic)"
}

// ErrorCode is the code of the run's error, "" when it succeeded.
func (res *InvokeResult) ErrorCode() string {
	if res.Error == nil {
		return ""
	}
	return string(res.Error.Code)
}

// resultOf turns a sandbox result into the API's answer.
func resultOf(d audit.Decision, res sandbox.Result) *InvokeResult {
	out := &InvokeResult{Decision: d, Status: StatusSucceeded, Result: res.Value, Output: res.Output, Calls: res.Calls, Error: res.Err}
	if out.Calls == nil {
		out.Calls = []sandbox.Call{}
	}
	if res.Err != nil {
		out.Status, out.Result = StatusFailed, nil
	}
	return out
}

// recording is the recording of a successful run of the version codeHash
// of name with args, whose tool calls were calls and whose result was
// value; nil when it is not kept (too large, or not JSON), counted either
// way.
func (r *Replayer) recording(name, codeHash string, args map[string]any, calls []recording.RecordedCall, value any) *recording.Recording {
	counter, _ := r.opts.Counter.(RecordingCounter)
	rec, err := recording.NewRecording(name, codeHash, args, calls, value, r.now())
	if err != nil {
		outcome := "unencodable"
		var fe *fault.Error
		if errors.As(err, &fe) && fe.Details["reason"] == "recording_too_large" {
			outcome = "too_large"
		}
		if counter != nil {
			counter.CountRecording(outcome, 0)
		}
		r.log.Info().Str("procedure", name).Str("code_hash", codeHash).Str("recording", outcome).Msg("replay: a run's recording is not kept")
		return nil
	}
	if counter != nil {
		counter.CountRecording("kept", rec.Bytes)
	}
	return rec
}
