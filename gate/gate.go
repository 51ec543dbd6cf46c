package gate

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/binding"
	"github.com/procgraph/procgraph/changes"
	"github.com/procgraph/procgraph/decide"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/internal/cache"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/internal/jsonvalue"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/recording"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/reuse"
	"github.com/procgraph/procgraph/signature"
	"github.com/procgraph/procgraph/usage"
)

// Gate defaults (docs/api.md "Serve settings").
const (
	// MaxWait bounds a long poll (wait_s).
	MaxWait = 60 * time.Second
	// DefaultMaxWaiters is Options.MaxWaiters' default.
	DefaultMaxWaiters = 1024
	// ReasonWaiters is the reason of a busy refusal of a long poll: this
	// server holds Options.MaxWaiters of them already.
	ReasonWaiters = "waiters"
	// pollEvery is how often the gate's poller reads the turns requests wait
	// on, for a change made on another instance (a change made here wakes
	// them at once).
	pollEvery = time.Second
	// DefaultRunGrace is Options.RunGrace's default: longer than the
	// longest replay timeout serve accepts (4 min), so an instance never
	// ends a run another instance with a longer timeout still has in
	// progress.
	DefaultRunGrace = 5 * time.Minute
	// DefaultSweepInterval is how often Sweeper sweeps.
	DefaultSweepInterval = time.Minute
)

// Options configure a Gate.
type Options struct {
	// MaxPending bounds the pending approvals; DefaultMaxPendingApprovals
	// when 0.
	MaxPending int
	// MaxPendingPerRequester bounds the pending approvals of one requester
	// (the token holder), so that one token cannot hold every place;
	// DefaultMaxPendingPerRequester when 0, and at most MaxPending.
	MaxPendingPerRequester int
	// MaxWaiters bounds the long polls (a turn's or a Get's wait) this
	// gate holds at once; DefaultMaxWaiters when 0.
	MaxWaiters int
	// ApprovalTimeout is each approval's one absolute deadline after its
	// turn arrived; DefaultApprovalTimeout when 0.
	ApprovalTimeout time.Duration
	// RunGrace is how long past the end of the longest run this instance
	// could have claimed (the turn's deadline plus the replay timeout) a
	// turn still running is left to be marked done before the gate ends it
	// as failed (TurnRecord.RunLost); DefaultRunGrace when 0.
	// It must cover the difference between instances' replay timeouts.
	RunGrace time.Duration
	// ReviewDefault is the review of a turn submitted without one
	// (TurnRequest.Review ""): ReviewBlock when "".
	ReviewDefault Review
	// OnTurn, when set, is told of each change of a stored turn this gate
	// made (pending, approved, rejected, expired, cancelled, running,
	// done), after it committed: what notifies people. It must not block.
	OnTurn func(Turn)
}

// Gate is the turn gate (docs/design.md "The turn gate"): it decides each turn
// with the decision table (decide.Decide), records the decision through the service's
// Recorder, asks an operator through the store's approvals when the table
// says so, and runs allowed turns with the Replayer's sandbox, admission
// and dispatcher. It is safe for concurrent use.
type Gate struct {
	r     *replay.Replayer
	svc   Service
	turns TurnStore
	opts  Options
	// blocks are the prepared blocks of this gate's turns waiting for an
	// operator or to run, by turn id (keep, turnBlock): a turn's block is
	// prepared once, when it is submitted.
	blocks *cache.Cache[string, keptBlock]
	// policies are the session policies this gate read (policyIndex).
	policies *policyIndex

	held atomic.Int64 // long polls holding a place (holdWaiter)

	mu      sync.Mutex
	waiters map[string][]chan struct{}
	// polling is whether the poller runs (it does while anyone waits);
	// pollEvery is its interval.
	polling   bool
	pollEvery time.Duration
}

// New returns the gate over r's service, sandbox and dispatcher, keeping
// its approvals and session policies in turns (the store: both stores
// implement TurnStore as well as procedures.Store).
func New(r *replay.Replayer, turns TurnStore, opts Options) *Gate {
	pb := PendingBounds{Total: opts.MaxPending, PerRequester: opts.MaxPendingPerRequester}.OrDefaults()
	opts.MaxPending, opts.MaxPendingPerRequester = pb.Total, pb.PerRequester
	if opts.MaxWaiters <= 0 {
		opts.MaxWaiters = DefaultMaxWaiters
	}
	if opts.ApprovalTimeout <= 0 {
		opts.ApprovalTimeout = DefaultApprovalTimeout
	}
	if opts.RunGrace <= 0 {
		opts.RunGrace = DefaultRunGrace
	}
	if !opts.ReviewDefault.Valid() {
		opts.ReviewDefault = ReviewBlock
	}
	return &Gate{r: r, svc: r.Service(), turns: turns, opts: opts, blocks: cache.New[string, keptBlock](keptBlocks(opts.MaxPending)), policies: newPolicyIndex(),
		waiters: map[string][]chan struct{}{}, pollEvery: pollEvery}
}

// TurnRequest is one block an agent asks to run.
type TurnRequest struct {
	Code      string
	Dialect   string
	SessionID string
	Phase     audit.Phase
	Arguments map[string]any
	Summary   string
	// Wait is how long to wait for an operator before answering pending
	// (at most MaxWait).
	Wait time.Duration
	// Capture, when set, captures the turn once it ran and succeeded: a
	// procedure is created, so it needs MayCapture.
	Capture *TurnCapture
	// Actor is the requester (the token holder).
	Actor string
	// MayCapture is whether the requester holds the capture scope: without
	// it a turn asking for Capture is refused (validateTurn).
	MayCapture bool
	// Review is how the turn is reviewed if it needs an operator
	// (ReviewBlock or ReviewAtCall); "" is Options.ReviewDefault.
	Review Review
}

// TurnAnswer is a turn's answer: Result is set when it ran (docs/api.md 200),
// else the turn is pending (202).
type TurnAnswer struct {
	*replay.InvokeResult
	Turn      Turn                  `json:"turn"`
	Procedure *procedures.Procedure `json:"procedure,omitempty"`
	// Suggestion names an exposed procedure to call instead of sending this
	// code again (reuse before regenerate); advice only, nothing decided changes.
	Suggestion *reuse.Suggestion `json:"suggestion,omitempty"`
	// Lifted lists what the turn's capture lifted into parameters (the turn
	// ran the code as reviewed; only its capture is lifted).
	Lifted []procedures.Lifted `json:"lifted,omitempty"`
	// suggested: Suggestion is the turn's capture's advice
	// (procedures.CaptureOutcome.Advice), no second Suggest needed.
	suggested bool
}

// Ran reports whether the turn ran (a 200 rather than a 202).
func (a *TurnAnswer) Ran() bool { return a.InvokeResult != nil }

// withProgram sets b's binding's Program: its ProgramKey (what a session
// policy set on it covers, procedures.Service.ProgramKey) under the
// catalogue it was classified with. The binding is b's own copy.
func (g *Gate) withProgram(b *replay.Block) {
	bind := *b.Binding
	// The Starlark the block runs (a python-async block's translation):
	// one key whatever the dialect it was written in.
	bind.Program = g.svc.ProgramKey(b.Analysis.Source, string(signature.Starlark), b.Catalogue, b.Class.ReadOnly, b.Arguments)
	b.Binding = &bind
}

// bindingNow is b's binding to check one stored as bound against: with
// its Program when bound carries one (withProgram; only then, so that a
// block whose approval holds no key is not lifted again).
func (g *Gate) bindingNow(b *replay.Block, bound *binding.Binding) *binding.Binding {
	if bound != nil && bound.Program != "" && b.Binding.Program == "" {
		g.withProgram(b)
	}
	return b.Binding
}

// sessionPolicy is the session's policy for b: the one set on its exact
// code hash, else the first (by code hash) whose binding's Program is b's
// — another text of the same program (docs/design.md "What an
// authorization binds to"), looked for only when the first finds none and
// nothing else decides b (undecided: asked then, once; a block its grants
// allow needs no policy). Both come from the gate's policy index
// (policyIndex: no store round trip while its entry is fresh).
func (g *Gate) sessionPolicy(ctx context.Context, sessionID string, b *replay.Block, undecided func() bool) (SessionPolicy, bool, error) {
	e, err := g.policies.policies(ctx, g.turns, sessionID, b.AuthEpoch)
	p, ok := e.byHash[b.Analysis.CodeHash]
	if ok || err != nil || b.Binding.Program == "" || !undecided() {
		return p, ok, err
	}
	p, ok = e.byProgram[b.Binding.Program]
	return p, ok, nil
}

// grantedProgram is the procedure whose durable grant covers b as a
// proc__ call of it would be covered (docs/design.md "What an
// authorization binds to"): the procedure of b's signature, its grant
// active (bound to its current version, classification, contracts and
// nested procedures as they are now), of b's classification, whose current
// version is b's program with its literals lifted, up to the parameters'
// names (LiftedProgramOf or InlinedProgramOf, under the catalogue b was
// classified with), and
// which takes the values b gives those parameters as a proc__ call's
// arguments (its input schema); nil when there is none. The procedure and
// its program come from the service's grant index
// (procedures.Service.GrantedProgramOf: no store round trip while nothing
// changed); an opaque block, or one that calls procedures itself, is
// never covered this way.
func (g *Gate) grantedProgram(ctx context.Context, b *replay.Block) *procedures.Procedure {
	if b.Analysis.Opaque || len(b.Analysis.ProcRefs) > 0 || b.Class.Problem != "" {
		return nil
	}
	cat := b.Catalogue
	gp, err := g.svc.GrantedProgramOf(ctx, b.Analysis.Signature, cat)
	if err != nil || gp == nil {
		return nil
	}
	p := gp.Procedure
	if !p.AutoRun.Active || p.ReadOnly != b.Class.ReadOnly || !slices.Equal(p.Signature, b.Analysis.Signature) || gp.Program.Hash == "" {
		return nil
	}
	// b's program as a capture lifts it, else with its literal bindings
	// inlined (every literal its own keyword's parameter).
	for _, lift := range []func(string, string, *procedures.Catalogue) procedures.LiftedProgram{g.svc.LiftedProgramOf, g.svc.InlinedProgramOf} {
		mine := lift(b.Analysis.Source, string(signature.Starlark), cat)
		if mine.Hash != gp.Program.Hash {
			continue
		}
		if args, ok := mine.Arguments(gp.Program.Params, b.Arguments); ok && gp.Admits(args) {
			return p
		}
	}
	return nil
}

// procOnlyOf reports whether every signature entry is a proc__ reference, and
// whether each has an active grant.
func procOnlyOf(b *replay.Block) (only, granted bool) {
	granted = true
	for _, n := range b.Analysis.Signature {
		if !procedures.IsProcName(n) {
			return false, false
		}
		if p := b.Refs[n]; p == nil || !p.AutoRun.Active {
			granted = false
		}
	}
	return true, granted
}

// turnOf describes the block as a Turn.
func turnOf(b *replay.Block, t Turn) Turn {
	t.CodeHash, t.Signature = b.Analysis.CodeHash, b.Analysis.Signature
	t.ReadOnly, t.Opaque = b.Class.ReadOnly, b.Analysis.Opaque
	t.StateChangingTools = jsonvalue.List(b.Class.StateChangingTools)
	t.UnknownTools = jsonvalue.List(b.Class.UnknownTools)
	return t
}

// validateTurn is the check of a turn request before anything about it is
// decided: the capture scope rule (docs/design.md "Secure by default": a turn's
// capture needs capture too, on every transport) first, then its fields.
func validateTurn(req *TurnRequest) error {
	if req.Capture != nil && !req.MayCapture {
		return auth.Forbidden(auth.ScopeCapture)
	}
	if !req.Phase.Valid() {
		return fault.Errorf(fault.CodeInvalid, "phase %q is not automatic or interactive", req.Phase).WithDetails("field", "phase")
	}
	if err := usage.CheckSessionID(req.SessionID); err != nil {
		return err
	}
	if len(req.Actor) > fields.MaxKeyBytes || !utf8.ValidString(req.Actor) {
		return fault.Errorf(fault.CodeInvalid, "actor must be UTF-8 of at most %d bytes", fields.MaxKeyBytes).WithDetails("field", "actor")
	}
	if len(req.Summary) > fields.MaxReasonBytes || !utf8.ValidString(req.Summary) {
		return fault.Errorf(fault.CodeInvalid, "summary must be UTF-8 of at most %d bytes", fields.MaxReasonBytes).WithDetails("field", "summary")
	}
	if req.Wait < 0 || req.Wait > MaxWait {
		return fault.Errorf(fault.CodeInvalid, "wait_s must be 0 to %d", int(MaxWait/time.Second)).WithDetails("field", "wait_s")
	}
	if req.Actor == "" {
		req.Actor = "anonymous"
	}
	return nil
}

// Submit decides one turn (decide.Decide) and runs it, denies it,
// or creates its approval and waits up to req.Wait for an operator. Errors:
// CodeForbidden (Capture without MayCapture: nothing decided), CodeInvalid, CodeInvalidCode, CodeTooLarge, CodeInvalidArguments (nothing
// asked or recorded), CodeDenied with the decision, CodeBusy (reason
// pending_approvals, pending_approvals_requester, waiters — nothing
// recorded — or replay_queue).
func (g *Gate) Submit(ctx context.Context, req TurnRequest) (*TurnAnswer, error) {
	if err := validateTurn(&req); err != nil {
		return nil, err
	}
	if err := g.reviewOf(&req); err != nil {
		return nil, err
	}
	arrived := g.r.Now()
	b, err := g.r.PrepareBlock(ctx, req.Code, req.Dialect, req.Arguments)
	if err != nil {
		return nil, err
	}
	in := decide.DecisionInput{Turn: true, Phase: req.Phase, ReadOnly: b.Class.ReadOnly, Problem: b.Class.Problem}
	procOnly, procsGranted := procOnlyOf(b)
	in.GrantActive = procOnly && procsGranted
	granted := false // grantedProgram was asked
	// program is the granted procedure whose canonical program the block
	// is (grantedProgram), nil when none.
	var program *procedures.Procedure
	var policy SessionPolicy
	if req.Phase == audit.PhaseInteractive {
		g.withProgram(b)
		// A block its grants already allow, or a grant covers as its
		// procedure's program, is decided by them: the session's other
		// policies are not read for it.
		p, ok, err := g.sessionPolicy(ctx, req.SessionID, b, func() bool {
			if !in.GrantActive && !procOnly {
				program, granted = g.grantedProgram(ctx, b), true
				in.GrantActive = program != nil
			}
			return !in.GrantActive
		})
		if err != nil {
			return nil, err
		}
		if ok && p.AppliesTo(req.Actor) {
			// A policy applies only to what the operator approved: else the
			// turn is reviewed again, as if there were none.
			if why := p.Binding.Check(b.Binding); why != "" {
				g.r.Logger().Info().Str("code_hash", b.Analysis.CodeHash).Str("session", req.SessionID).Str("inactive_reason", why).
					Msg("turn: the session's policy is inactive")
			} else {
				policy, in.PolicyAutoRun = p, p.Policy == ChoiceAutoRun
			}
		}
	}
	if req.Phase == audit.PhaseInteractive && !in.PolicyAutoRun && !procOnly && !granted {
		if program = g.grantedProgram(ctx, b); program != nil {
			in.GrantActive = true
		}
	}
	v := decide.Decide(in)
	ans, err := g.decideAndRun(ctx, req, b, v, policy, program, arrived)
	if ans != nil && !ans.suggested {
		ans.Suggestion = g.suggest(ctx, b, procOnly)
	}
	return ans, err
}

// suggest is reuse before regenerate for a turn (procedures.Service.Suggest):
// nil for a block that already calls only proc__ tools (procOnly, as
// procOnlyOf says), or when the store cannot say (advice is never worth
// failing a turn for).
func (g *Gate) suggest(ctx context.Context, b *replay.Block, procOnly bool) *reuse.Suggestion {
	if procOnly {
		return nil
	}
	s, err := g.svc.Suggest(ctx, b.Analysis.Signature, "")
	if err != nil {
		g.r.Logger().Warn().Err(err).Msg("turn: no reuse suggestion")
		return nil
	}
	return s
}

// decideAndRun carries out verdict v on the prepared turn: run it now,
// deny it, or create its approval (and wait for it when asked).
func (g *Gate) decideAndRun(ctx context.Context, req TurnRequest, b *replay.Block, v decide.Verdict, policy SessionPolicy, program *procedures.Procedure, arrived time.Time) (*TurnAnswer, error) {
	t := turnOf(b, Turn{
		ID: NewTurnID(arrived), SessionID: req.SessionID, Phase: req.Phase, Summary: req.Summary,
		RequestedBy: req.Actor, RequestedAt: arrived.UTC().Truncate(time.Millisecond), Review: req.Review,
	})
	if !v.Pending {
		t.Deadline = t.RequestedAt.Add(g.r.Timeout())
		reviewer, note := "", ""
		switch v.Reason {
		case audit.ReasonSessionPolicy:
			reviewer, note = policy.SetBy, replay.BindingNote(policy.Binding)
		case audit.ReasonDurableAutoRun:
			note = grantsNote(b, program)
		}
		return g.runNow(ctx, t, b, v, req, reviewer, note, arrived)
	}
	release := func() {}
	if req.Wait > 0 {
		r, err := g.holdWaiter() // before anything is recorded: refused, nothing is pending
		if err != nil {
			return nil, err
		}
		release = r
		defer release()
	}
	if req.Review == ReviewAtCall {
		return g.submitAtCall(ctx, req, b, t, arrived, release)
	}
	rec := TurnRecord{Turn: t, Code: req.Code, Dialect: req.Dialect, Arguments: b.Arguments, Capture: req.Capture, Binding: b.Binding}
	rec.Status = TurnPending
	rec.Deadline = t.RequestedAt.Add(g.opts.ApprovalTimeout)
	return g.ask(ctx, req, rec, b, release)
}

// ask creates the pending approval rec (its bounds checked with the
// write), and waits for an operator when req asks to (the waiter's place
// taken by the caller: release gives it back), running the turn once
// approved. A turn paused at a call (rec.Pause) has its pause recorded.
func (g *Gate) ask(ctx context.Context, req TurnRequest, rec TurnRecord, b *replay.Block, release func()) (*TurnAnswer, error) {
	t := rec.Turn
	if err := g.turns.CreateApproval(ctx, rec,
		PendingBounds{Total: g.opts.MaxPending, PerRequester: g.opts.MaxPendingPerRequester}, g.r.Now()); err != nil {
		return nil, err
	}
	if rec.Pause != nil {
		if _, err := g.r.Record(context.WithoutCancel(ctx), g.pauseDecision(t, b, rec.Pause)); err != nil {
			g.r.Logger().Error().Err(err).Str("turn", t.ID).Msg("turn: the pause could not be recorded")
		}
	}
	g.keep(rec, req.Code, b)
	g.published(rec.Turn)
	g.r.Logger().Info().Str("turn", t.ID).Str("code_hash", t.CodeHash).Str("session", t.SessionID).
		Str("actor", req.Actor).Msg("turn pending: an operator must decide")
	if req.Wait <= 0 {
		return &TurnAnswer{Turn: rec.Turn}, nil
	}
	cur, err := g.wait(ctx, t.ID, req.Wait)
	release()
	if err != nil {
		return nil, err
	}
	switch cur.Status {
	case TurnApproved:
		return g.Run(ctx, t.ID, req.Actor)
	case TurnPending:
		return &TurnAnswer{Turn: cur.Turn}, nil
	case TurnRejected, TurnExpired:
		return nil, g.deniedTurn(cur)
	}
	// Cancelled, or already running or run (by its requester elsewhere).
	return nil, fault.Errorf(fault.CodeConflict, "turn %s is %s", cur.ID, cur.Status).
		WithDetails("reason", "status").WithDetails("status", string(cur.Status)).WithDetails("turn", cur.Turn)
}

// runNow records the decision on a turn decided at once and runs it when
// allowed.
func (g *Gate) runNow(ctx context.Context, t Turn, b *replay.Block, v decide.Verdict, req TurnRequest, reviewer, note string, arrived time.Time) (*TurnAnswer, error) {
	ctx, cancel := context.WithDeadline(ctx, arrived.Add(g.r.Timeout()))
	defer cancel()
	if !v.Allowed() {
		t.Status = TurnDenied
		d, err := g.r.Record(ctx, g.turnDecision(t, b, v, []string{}))
		if err != nil {
			return nil, err
		}
		return nil, turnDenied(d)
	}
	release, err := g.r.Admit(ctx, req.Actor)
	if err != nil {
		return nil, err
	}
	defer release()
	allowed := replay.AllowSet(b.Analysis.Signature, b.Class, decide.Verdict{Outcome: audit.Allowed, StateChanging: v.StateChanging})
	d := g.turnDecision(t, b, v, allowed)
	d.Note = note
	// A turn that may change state has its decision stored before it
	// runs; any other, with its result after it ran (count).
	deferred := !v.DurableFirst()
	if deferred {
		d, err = g.r.Build(d)
	} else {
		d, err = g.r.Record(ctx, d)
	}
	if err != nil {
		return nil, err
	}
	ans, ran := g.execute(ctx, t, b, d, allowed, reviewer, deferred)
	captured := g.capture(ctx, ans, req.Code, req.Dialect, req.Capture)
	if err := g.count(ctx, ans, b, ran, captured); err != nil {
		return nil, err
	}
	return ans, nil
}

// grantsNote names the bindings of the grants that allowed a proc__-only
// block (procOnlyOf), by procedure, and of the grant of program (the
// procedure whose canonical program the block is: grantedProgram), if any.
func grantsNote(b *replay.Block, program *procedures.Procedure) string {
	var s strings.Builder
	s.WriteString("grants")
	if p := program; p != nil && p.Grant != nil {
		s.WriteString(" " + p.Name + " " + p.Grant.Binding.Hash() + " (this block is its program)")
	}
	for _, n := range b.Analysis.ProcRefs {
		if p := b.Refs[n]; p != nil && p.Grant != nil {
			s.WriteString(" " + n + " " + p.Grant.Binding.Hash())
		}
	}
	return s.String()
}

// auditOf is the audit record of a decision about turn t before its
// outcome: kind turn, t's procedure name, code hash and phase, its
// requester as the actor, and the agent session it belongs to — every
// record about a turn names its session, as a policy's does. The caller
// sets the outcome and reason (an approval also its kind and operator).
func auditOf(t Turn) audit.Decision {
	return audit.Decision{Kind: audit.KindTurn, Procedure: signature.Name(t.Signature), CodeHash: t.CodeHash,
		Phase: t.Phase, Actor: t.RequestedBy, Session: t.SessionID}
}

// turnDecision is the one decision (kind turn) on t.
func (g *Gate) turnDecision(t Turn, b *replay.Block, v decide.Verdict, allowed []string) audit.Decision {
	d := auditOf(t)
	d.Procedure, d.Outcome, d.Reason, d.AllowedTools, d.Suggestion = b.Analysis.Name, v.Outcome, v.Reason, allowed, v.Suggestion
	return d
}

// turnDenied is the CodeDenied error of a denied turn.
func turnDenied(d audit.Decision) error {
	e := fault.Errorf(fault.CodeDenied, "the turn was denied: %s", d.Reason).WithDetails(fault.DetailDecision, d)
	if d.Suggestion != "" {
		e = e.WithDetails("suggestion", d.Suggestion)
	}
	return e
}

// ranBlock is what execute saw of a turn's run: the run, for a version's
// health, and its tool calls as answered when it succeeded and recordings
// are kept (replay.Replayer.RunBlock).
type ranBlock struct {
	run   health.Run
	calls []recording.RecordedCall
	// pending is what the run leaves to commit (replay.Pending): count
	// adds the turn's use and commits it.
	pending *replay.Pending
}

// execute runs an allowed turn in the sandbox; deferred says its decision
// d was built, not stored (it is stored with the run: count).
func (g *Gate) execute(ctx context.Context, t Turn, b *replay.Block, d audit.Decision, allowed []string, reviewer string, deferred bool) (*TurnAnswer, ranBlock) {
	started := g.r.Now()
	pending := &replay.Pending{}
	out, calls := g.r.RunBlock(ctx, replay.RunRequest{Block: b, Decision: d, Allowed: allowed, UsageKey: usage.UsageKey(t.SessionID, ""), Bound: b.Binding,
		Deferred: deferred, Pending: pending,
		Request: replay.InvokeRequest{Name: b.Analysis.Name, Phase: t.Phase, SessionID: t.SessionID, Actor: t.RequestedBy,
			ReviewedBy: reviewer, ReviewerHasGrantScope: reviewer != ""}})
	t.Status = TurnSucceeded
	if out.Status != replay.StatusSucceeded {
		t.Status = TurnFailed
	}
	g.r.Logger().Info().Str("turn", t.ID).Str("decision", d.ID).Str("code_hash", t.CodeHash).Str("status", out.Status).Msg("turn run")
	run := health.Run{Failure: replay.FailureClass(out.Error), Duration: g.r.Now().Sub(started), Caller: t.RequestedBy}
	return &TurnAnswer{InvokeResult: out, Turn: t}, ranBlock{run: run, calls: calls, pending: pending}
}

// capture captures a turn that ran and succeeded, when it asked for it,
// under the session's usage key (ans.Procedure), and returns the code hash
// of the version it stored ("" when none: not asked, a use of a proc__
// call, or a failed capture, which is logged: the turn ran all the same).
func (g *Gate) capture(ctx context.Context, ans *TurnAnswer, code, dialect string, capture *TurnCapture) string {
	t := ans.Turn
	if capture == nil || t.Status != TurnSucceeded {
		return ""
	}
	cr := procedures.CaptureRequest{Code: code, Dialect: dialect, Summary: capture.Summary, Cause: capture.Cause,
		SessionID: t.SessionID, Status: procedures.StatusSucceeded, Metadata: capture.Metadata, NoLift: capture.NoLift}
	if cr.Summary == "" {
		cr.Summary = t.Summary
	}
	co, err := g.svc.Capture(context.WithoutCancel(ctx), cr)
	if err != nil {
		g.r.Logger().Warn().Err(err).Str("turn", t.ID).Msg("turn: the succeeded turn could not be captured")
		return ""
	}
	ans.Procedure = co.Procedure
	ans.Suggestion, ans.suggested = co.Advice(), true
	if len(co.Lifted) > 0 {
		ans.Lifted = co.Lifted
	}
	return co.CodeHash
}

// count counts a turn's run in the health of the stored version whose code
// it ran (docs/design.md "Health of each version"): the version its capture
// stored (captured), else its own code's, when one is stored. A successful
// run keeps its recording there ("Verification against recorded tool
// responses"): the turn's arguments, and the examples of what the capture
// lifted, with which the stored version makes the same calls. That use is
// committed with what the run left (replay.Pending: its decision's result,
// or its decision when it was not stored before the run, nested replays'
// records and uses) in one transaction; an error (replay.Replayer.Commit)
// says the turn's decision could not be stored and its answer is withheld.
func (g *Gate) count(ctx context.Context, ans *TurnAnswer, b *replay.Block, ran ranBlock, captured string) error {
	g.addUse(ans, b, ran, captured)
	return g.r.Commit(ctx, ran.pending)
}

// addUse adds to ran.pending the use count commits: the turn's run in the
// health of the stored version whose code it ran (captured, else its own
// code's), with its recording when it succeeded.
func (g *Gate) addUse(ans *TurnAnswer, b *replay.Block, ran ranBlock, captured string) {
	t := ans.Turn
	hash, args := t.CodeHash, b.Arguments
	if captured != "" {
		hash = captured
		if len(ans.Lifted) > 0 {
			args = maps.Clone(args)
			if args == nil {
				args = map[string]any{}
			}
			for _, l := range ans.Lifted {
				args[l.Parameter] = l.Example
			}
		}
	}
	var kept procedures.Kept
	if ran.run.Failure == "" {
		kept = g.r.Kept(b.Analysis.Name, hash, args, ran.calls, ans.Result)
	}
	if in, ok := g.svc.BlockUse(b.Analysis.Name, hash, usage.UsageKey(t.SessionID, ""), ran.run, kept); ok {
		ran.pending.Use(in)
	}
}

// Get returns the turn id to its requester, waiting up to wait while it is
// pending. Errors: CodeNotFound (unknown or non-canonical id), CodeForbidden
// (another actor's turn), CodeBusy (reason waiters: holdWaiter).
func (g *Gate) Get(ctx context.Context, id, actor string, wait time.Duration) (*Turn, error) {
	cur, err := g.load(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := requester(cur, actor); err != nil {
		return nil, err
	}
	if wait > 0 && cur.Status == TurnPending {
		release, err := g.holdWaiter()
		if err != nil {
			return nil, err
		}
		defer release()
		if cur, err = g.wait(ctx, id, min(wait, MaxWait)); err != nil {
			return nil, err
		}
	}
	return &cur.Turn, nil
}

// holdWaiter takes one of the gate's Options.MaxWaiters places for a
// long poll, the one bound of them on every transport (POST /v1/turns and
// GET /v1/turns/{id} with wait_s, MCP await_approval): past it the poll is
// refused at once with CodeBusy (reason waiters, Retry-After) — a place
// is not worth waiting for. release gives the place back; calling it
// again does nothing.
func (g *Gate) holdWaiter() (release func(), err error) {
	if g.held.Add(1) > int64(g.opts.MaxWaiters) {
		g.held.Add(-1)
		return nil, fault.Errorf(fault.CodeBusy,
			"%d requests are already waiting for an operator, the most this server holds; ask again later or without wait_s", g.opts.MaxWaiters).
			WithDetails("reason", ReasonWaiters).WithDetails("limit", g.opts.MaxWaiters).WithDetails(fault.DetailRetryAfter, 1)
	}
	var once sync.Once
	return func() { once.Do(func() { g.held.Add(-1) }) }, nil
}

// load returns the stored turn id with its deadlines applied (settle).
func (g *Gate) load(ctx context.Context, id string) (*TurnRecord, error) {
	if !ValidTurnID(id) {
		return nil, fault.Errorf(fault.CodeNotFound, "no turn %q", id)
	}
	cur, err := g.turns.GetApproval(ctx, id)
	if err != nil {
		return nil, err
	}
	cur, _, err = g.settle(ctx, cur)
	return cur, err
}

// settle applies a stored turn's deadlines: a turn past its deadline
// without having run is marked expired (with its decision), a running one
// is ended when its run is lost and purged when past its deadline
// (settleRun). It returns the turn as it then is, and whether this call
// changed it; each change is a compare-and-set, and a concurrent change
// wins.
func (g *Gate) settle(ctx context.Context, cur *TurnRecord) (*TurnRecord, bool, error) {
	if (cur.Status == TurnPending || cur.Status == TurnApproved) && !cur.Live(g.r.Now()) {
		return g.expire(ctx, cur)
	}
	return g.settleRun(ctx, cur)
}

// settleRun ends a running turn whose run is lost (endLost), else purges it
// once past its deadline (purge); any other turn is returned as it is.
func (g *Gate) settleRun(ctx context.Context, cur *TurnRecord) (*TurnRecord, bool, error) {
	if cur.RunLost(g.r.Now(), g.maxRun()) {
		return g.endLost(ctx, cur)
	}
	return g.purge(ctx, cur)
}

// maxRun is the longest a run claimed on this instance can last after its
// claim, with the grace that covers other instances' longer runs
// (TurnRecord.RunLost).
func (g *Gate) maxRun() time.Duration { return g.r.Timeout() + g.opts.RunGrace }

// endLost ends a running turn whose run is lost (TurnRecord.RunLost):
// it becomes failed and, being done, loses its code and argument values,
// with its decision (kind turn, reason run_lost) naming, for a turn
// resumed at a call, the call whose run was lost by its digests
// (lostNote): that call is never sent again.
// The transition is a compare-and-set on running, as the run's own mark of
// done (finish), so exactly one of them is stored: a run marked done first
// keeps its status, and a run that ends after the ending keeps the ending.
func (g *Gate) endLost(ctx context.Context, cur *TurnRecord) (*TurnRecord, bool, error) {
	next := *cur
	next.Status = TurnFailed
	d := auditOf(cur.Turn)
	d.Outcome, d.Reason, d.AllowedTools, d.Note = audit.Denied, audit.ReasonRunLost, []string{}, lostNote(cur.Call)
	out, ok, err := g.compareAndSet(ctx, cur.ID, func() (*TurnRecord, error) {
		out, _, err := g.transition(ctx, next, []TurnStatus{TurnRunning}, false, d)
		return out, err
	})
	if ok {
		g.r.Logger().Warn().Str("turn", cur.ID).Str("code_hash", cur.CodeHash).Str("reason", audit.ReasonRunLost).
			Msg("turn ended as failed: its run was never marked done (its instance died or lost the store)")
		g.notify(cur.ID)
	}
	return out, ok, err
}

// purge empties a turn claimed running whose deadline has passed but that
// still holds code or argument values — its instance may have died mid-run
// and will never mark it done — through the store's transition
// (TurnRecord.PurgedAt), like the lazy expiry. Any other turn is
// returned as it is.
func (g *Gate) purge(ctx context.Context, cur *TurnRecord) (*TurnRecord, bool, error) {
	now := g.r.Now()
	if cur.Status != TurnRunning || cur.Live(now) || !cur.HoldsValues() {
		return cur, false, nil
	}
	return g.compareAndSet(ctx, cur.ID, func() (*TurnRecord, error) {
		return g.turns.TransitionTurn(ctx, *cur, []TurnStatus{TurnRunning}, false, now)
	})
}

// expire marks a turn past its deadline expired, with its decision
// (approval_expired), once.
func (g *Gate) expire(ctx context.Context, cur *TurnRecord) (*TurnRecord, bool, error) {
	g.forget(cur.ID)
	next := *cur
	next.Status = TurnExpired
	v := decide.ExpiredVerdict()
	d := auditOf(cur.Turn)
	d.Outcome, d.Reason = v.Outcome, v.Reason
	out, ok, err := g.compareAndSet(ctx, cur.ID, func() (*TurnRecord, error) {
		out, _, err := g.transition(ctx, next, []TurnStatus{TurnPending, TurnApproved}, false, d)
		return out, err
	})
	if ok {
		g.notify(cur.ID)
	}
	return out, ok, err
}

// compareAndSet runs write, a transition of turn id. When its condition no
// longer holds (CodeConflict: a concurrent change won), it returns the turn
// as that change left it; ok reports whether write changed it.
func (g *Gate) compareAndSet(ctx context.Context, id string, write func() (*TurnRecord, error)) (out *TurnRecord, ok bool, err error) {
	out, err = write()
	if fault.ErrorCode(err) == fault.CodeConflict {
		out, err = g.turns.GetApproval(ctx, id)
		return out, false, err
	}
	return out, err == nil, err
}

// transition records ds and applies the transition in one store
// transaction (each decision built and counted by the Recorder).
func (g *Gate) transition(ctx context.Context, next TurnRecord, from []TurnStatus, live bool, ds ...audit.Decision) (*TurnRecord, []audit.Decision, error) {
	var out *TurnRecord
	var built []audit.Decision
	var apply func(i int) error
	apply = func(i int) error {
		if i == len(ds) {
			for _, d := range built {
				if d.Kind == audit.KindTurn && d.Outcome == audit.Denied {
					next.Denial = &d
				}
			}
			var err error
			out, err = g.turns.TransitionTurn(ctx, next, from, live, g.r.Now(), built...)
			return err
		}
		_, err := g.svc.Recorder().RecordWith(ds[i], func(d audit.Decision) error {
			built = append(built, d)
			return apply(i + 1)
		})
		return err
	}
	if err := apply(0); err != nil {
		return nil, nil, err
	}
	if out != nil {
		g.published(out.Turn)
	}
	return out, built, nil
}

// published tells the change feed that stored turn t changed (after the
// write committed), so the console's approval queue follows without polling.
func (g *Gate) published(t Turn) {
	g.svc.Changes().Publish(changes.Change{Kind: changes.ChangeApproval, Turn: t.ID, CodeHash: t.CodeHash})
	if g.opts.OnTurn != nil {
		g.opts.OnTurn(t)
	}
}

func requester(cur *TurnRecord, actor string) error {
	if actor == "" {
		actor = "anonymous"
	}
	if cur.RequestedBy != actor {
		return fault.Errorf(fault.CodeForbidden, "only the turn's requester may do this")
	}
	return nil
}

// deniedTurn is the denial of a rejected or expired turn, carrying its
// decision: the audit record the transition kept with the turn
// (TurnRecord.Denial), or — for a turn denied by a version that did not keep
// it — the decision rebuilt from the turn, without the record's id and time.
func (g *Gate) deniedTurn(cur *TurnRecord) error {
	d := auditOf(cur.Turn)
	d.Outcome, d.Reason, d.AllowedTools = audit.Denied, audit.ReasonOperatorRejected, []string{}
	if cur.Status == TurnExpired {
		d.Reason = audit.ReasonApprovalExpired
	}
	if cur.Denial != nil {
		d = *cur.Denial
	}
	return fault.Errorf(fault.CodeDenied, "the turn was denied: %s", d.Reason).WithDetails(fault.DetailDecision, d).WithDetails("turn", cur.Turn)
}

// wait waits up to d for turn id to leave pending (resolved here or on
// another instance, cancelled, expired) and returns it as it then is. It
// reads the turn when it starts and when woken: at once by a change made
// through this gate (notify), or by the gate's poller for a change made
// elsewhere (poll).
func (g *Gate) wait(ctx context.Context, id string, d time.Duration) (*TurnRecord, error) {
	ch := g.addWaiter(id)
	defer g.removeWaiter(id, ch)
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		cur, err := g.load(ctx, id)
		if err != nil || cur.Status != TurnPending {
			return cur, err
		}
		if left := cur.Deadline.Sub(g.r.Now()); left < d {
			timer.Reset(left)
		}
		select {
		case <-ctx.Done():
			return nil, fault.Errorf(fault.CodeUnavailable, "the request ended while waiting for an operator")
		case <-timer.C:
			return g.load(ctx, id)
		case <-ch:
		}
	}
}

// addWaiter registers a waiter of turn id, starting the poller if it is
// not running.
func (g *Gate) addWaiter(id string) chan struct{} {
	ch := make(chan struct{}, 1)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.waiters[id] = append(g.waiters[id], ch)
	if !g.polling {
		g.polling = true
		go g.poll()
	}
	return ch
}

func (g *Gate) removeWaiter(id string, ch chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ws := g.waiters[id]
	if i := slices.Index(ws, ch); i >= 0 {
		ws = slices.Delete(ws, i, i+1)
	}
	if len(ws) == 0 {
		delete(g.waiters, id)
	} else {
		g.waiters[id] = ws
	}
}

// poll is the gate's one poller: every pollEvery, while anyone waits, it
// reads each turn waited on once — however many requests wait on it — and
// wakes its waiters when it is no longer pending (pollOnce). It stops when
// nobody waits.
func (g *Gate) poll() {
	t := time.NewTicker(g.pollEvery)
	defer t.Stop()
	for range t.C {
		if !g.pollOnce() {
			return
		}
	}
}

// pollOnce reads each waited-on turn once and wakes the waiters of those
// no longer pending (or unreadable: the waiter's own read reports why). It
// reports false, having marked the poller stopped, when nobody waits.
func (g *Gate) pollOnce() bool {
	g.mu.Lock()
	if len(g.waiters) == 0 {
		g.polling = false
		g.mu.Unlock()
		return false
	}
	ids := make([]string, 0, len(g.waiters))
	for id := range g.waiters {
		ids = append(ids, id)
	}
	g.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), MaxWait)
	defer cancel()
	for _, id := range ids {
		if cur, err := g.turns.GetApproval(ctx, id); err != nil || cur.Status != TurnPending {
			g.notify(id)
		}
	}
	return true
}

// notify wakes the waiters of turn id.
func (g *Gate) notify(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, ch := range g.waiters[id] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Waiting returns how many requests are waiting for an operator on this
// instance (long polls in progress).
func (g *Gate) Waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, ws := range g.waiters {
		n += len(ws)
	}
	return n
}
