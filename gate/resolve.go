package gate

import (
	"context"
	"strings"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/binding"
	"github.com/procgraph/procgraph/decide"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/signature"
)

// Run runs an approved turn for its requester, once: the claim (approved →
// running, before the deadline) and the turn's decision (operator_approved)
// are one store transaction, so two runners — on two instances too —
// cannot both run it. Errors: CodeNotFound, CodeForbidden (another actor),
// CodeConflict (not approved, already run, expired), CodeBusy.
func (g *Gate) Run(ctx context.Context, id, actor string) (*TurnAnswer, error) {
	arrived := g.r.Now()
	ctx, cancel := context.WithDeadline(ctx, arrived.Add(g.r.Timeout()))
	defer cancel()
	cur, err := g.load(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := requester(cur, actor); err != nil {
		return nil, err
	}
	if cur.Status != TurnApproved {
		return nil, fault.Errorf(fault.CodeConflict, "turn %s is %s: only an approved turn runs", id, cur.Status).
			WithDetails("reason", "status").WithDetails("status", string(cur.Status))
	}
	var v decide.Verdict // denies when there is no resolution
	if cur.Resolution != nil {
		v = decide.ResolveVerdict(cur.Resolution.Choice.Runs())
	}
	if !v.Allowed() {
		return nil, fault.Errorf(fault.CodeInternal, "turn %s is approved without a resolution that runs it; it will not run", id)
	}
	// What runs is what the operator approved, classified under the
	// current catalogue: the block prepared for it, rechecked (or prepared
	// again from the stored code: turnBlock).
	b, err := g.turnBlock(ctx, cur, cur.Code)
	if err != nil {
		return nil, err // e.g. the catalogue changed and the arguments no longer fit: nothing runs
	}
	if b.Analysis.CodeHash != cur.CodeHash {
		return nil, fault.Errorf(fault.CodeInternal, "the approved block of turn %s no longer analyses as approved; it will not run", id)
	}
	// What the operator approved must still be what runs: else the turn is
	// denied (the agent submits it again, and it is reviewed again).
	if why := cur.Binding.Check(g.bindingNow(b, cur.Binding)); why != "" {
		return nil, g.denyApproved(ctx, cur, b, why)
	}
	// Only a turn that passed every check waits for a sandbox slot.
	release, err := g.r.Admit(ctx, cur.RequestedBy)
	if err != nil {
		return nil, err
	}
	defer release()
	allowed := replay.AllowSet(b.Analysis.Signature, b.Class, decide.Verdict{Outcome: v.Outcome, StateChanging: v.StateChanging})
	next := *cur
	next.Status = TurnRunning
	d := g.turnDecision(cur.Turn, b, v, allowed)
	d.Note = replay.BindingNote(cur.Binding)
	if cur.Pause != nil {
		d.Note += "; resume at " + callNote(cur.Pause)
	}
	_, built, err := g.transition(ctx, next, []TurnStatus{TurnApproved}, true, d)
	if err != nil {
		return nil, err
	}
	g.forget(id)
	d = built[0]
	if cur.Pause != nil {
		return g.resume(ctx, cur, next, b, d, allowed)
	}
	ans, ran := g.execute(ctx, cur.Turn, b, d, allowed, cur.Resolution.By, false)
	g.finish(ctx, next, ans, b, ran)
	g.grantSingleRead(ctx, cur, b, ans)
	g.notify(id)
	return ans, nil
}

// singleRead reports whether b is one read-only tool's call: a block
// whose signature is one catalogue tool that changes no state.
func singleRead(b *replay.Block) bool {
	return len(b.Analysis.Signature) == 1 && len(b.Analysis.ProcRefs) == 0 && !b.Analysis.Opaque && b.Class.ReadOnly && b.Class.Problem == ""
}

// grantSingleRead carries out an auto_run given to a block that is one
// read-only tool's call (docs/design.md "The turn gate"): once it ran and
// succeeded, its procedure — captured now unless the turn's capture
// stored it — gets a durable grant from the operator who answered, so
// the same program in any text, with any values, runs for every caller
// until revoked (grantedProgram); such a procedure is never exposed to
// planners (one tool). Failures are logged: the turn ran all the same.
func (g *Gate) grantSingleRead(ctx context.Context, cur *TurnRecord, b *replay.Block, ans *TurnAnswer) {
	r := cur.Resolution
	if r == nil || r.Choice != ChoiceAutoRun || !singleRead(b) || ans.Turn.Status != TurnSucceeded {
		return
	}
	ctx = context.WithoutCancel(ctx)
	var name string
	if ans.Procedure == nil {
		co, err := g.svc.Capture(ctx, procedures.CaptureRequest{Code: cur.Code, Dialect: cur.Dialect, SessionID: cur.SessionID,
			Summary: cur.Summary, Status: procedures.StatusSucceeded})
		if err != nil {
			g.r.Logger().Warn().Err(err).Str("turn", cur.ID).Msg("turn: the read auto_run was given to could not be captured to grant it")
			return
		}
		name = co.Procedure.Name
	} else {
		name = ans.Procedure.Name
	}
	if _, _, err := g.svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: name, Enabled: true, Actor: r.By,
		Reason: strings.TrimSpace("auto_run of turn " + cur.ID + ": " + r.Reason)}); err != nil {
		g.r.Logger().Warn().Err(err).Str("turn", cur.ID).Msg("turn: the read auto_run was given to could not be granted")
	}
}

// denyApproved denies the approved turn cur, whose binding no longer holds
// for b (why is binding.Binding.Check's reason; a nested procedure that
// changed is denied nested_changed): the denial is recorded with the
// transition to denied, and nothing runs.
func (g *Gate) denyApproved(ctx context.Context, cur *TurnRecord, b *replay.Block, why string) error {
	next := *cur
	next.Status = TurnDenied
	reason := why
	if why == binding.InactiveNestedChanged {
		reason = binding.ReasonNestedChanged
	}
	d := g.turnDecision(cur.Turn, b, decide.Verdict{Outcome: audit.Denied, Reason: reason}, []string{})
	d.Note = replay.BindingNote(cur.Binding)
	out, _, err := g.transition(ctx, next, []TurnStatus{TurnApproved}, true, d)
	if err != nil {
		return err
	}
	g.forget(cur.ID)
	g.notify(cur.ID)
	g.r.Logger().Info().Str("turn", cur.ID).Str("code_hash", cur.CodeHash).Str("inactive_reason", why).
		Msg("turn denied: what the operator approved is no longer what would run")
	return g.deniedTurn(out)
}

// finish marks the claimed turn running done with its run's status — a
// compare-and-set on running — in one commit with what the run left (its
// decision's result, nested replays' records and uses) and, unless it
// captures, its own use (addUse; gate.TurnStore.FinishTurn); a turn that
// captures is captured then, and its use counted after (count). When the
// gate has already ended the run as lost (endLost: its instance took
// longer than any run may), the ending stays: the answer carries the turn
// as stored (failed) with what the run did, what the run left is
// committed all the same, and nothing is captured. Exactly one of the two
// endings is stored.
func (g *Gate) finish(ctx context.Context, running TurnRecord, ans *TurnAnswer, b *replay.Block, ran ranBlock) {
	ctx = context.WithoutCancel(ctx)
	done := running
	done.Status = ans.Turn.Status
	captures := running.Capture != nil && done.Status == TurnSucceeded
	if !captures {
		g.addUse(ans, b, ran, "")
	}
	var stored *TurnRecord
	finished := false
	// The decision was stored with the claim: CommitWith only logs.
	_ = g.r.CommitWith(ctx, ran.pending, func(rr procedures.RunRecord) ([]procedures.UseResult, error) {
		var res []procedures.UseResult
		var err error
		stored, finished, res, err = g.turns.FinishTurn(ctx, done, g.r.Now(), rr)
		return res, err
	})
	switch {
	case stored == nil:
		g.r.Logger().Error().Str("turn", running.ID).Msg("turn: the finished turn could not be marked done")
	case !finished:
		g.r.Logger().Warn().Str("turn", running.ID).Str("status", string(ans.Turn.Status)).
			Msg("turn: the run ended after the gate had ended it as lost; the ending stays")
		ans.Turn = stored.Turn
		if captures {
			_ = g.count(ctx, ans, b, ran, "") // as above
		}
		return
	}
	if captures {
		_ = g.count(ctx, ans, b, ran, g.capture(ctx, ans, running.Code, running.Dialect, running.Capture)) // as above
	}
}

// Cancel cancels its requester's pending or approved turn (a decision
// turn_cancelled records it). Errors: CodeNotFound, CodeForbidden,
// CodeConflict (it ran, or is done).
func (g *Gate) Cancel(ctx context.Context, id, actor string) (*Turn, error) {
	cur, err := g.load(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := requester(cur, actor); err != nil {
		return nil, err
	}
	next := *cur
	next.Status = TurnCancelled
	d := auditOf(cur.Turn)
	d.Outcome, d.Reason = audit.Denied, audit.ReasonTurnCancelled
	out, _, err := g.transition(ctx, next, []TurnStatus{TurnPending, TurnApproved}, false, d)
	if err != nil {
		return nil, err
	}
	g.forget(id)
	g.notify(id)
	return &out.Turn, nil
}

// ResolveRequest is an operator's answer to an approval.
type ResolveRequest struct {
	ID     string
	Choice Choice
	Reason string
	// Code, when set, replaces the block: it is analysed like any turn and
	// is what runs.
	Code *string
	// Actor is the operator; HasGrant whether they hold the grant scope
	// (without it nothing is resolved).
	Actor    string
	HasGrant bool
	// Call, when set, is the call the operator answers (a turn paused at
	// a call): the answer is refused (CodeConflict, reason
	// ReasonCallChanged) unless the turn is paused at that very call, so
	// an answer given to one pause never answers the next.
	Call *CallRef
}

// CallRef names the call an answer is given at: its position and the
// digest of its arguments (TurnCall's).
type CallRef struct {
	Position   int    `json:"position"`
	ArgsDigest string `json:"args_digest"`
}

// ReasonCallChanged is the conflict reason of an answer given at a call
// (ResolveRequest.Call) the turn is no longer paused at.
const ReasonCallChanged = "call_changed"

// Resolve resolves a pending approval once (docs/design.md's choices): the
// approval decision (and, for reject, the turn's denial) are recorded in the
// same store transaction as the resolution; auto_run then stores durable
// grants (a proc__-only block) or the session's policy, always_ask the
// policy. Errors: CodeForbidden (no grant scope), CodeInvalid (unknown
// choice, reason too long), CodeNotFound (unknown or non-canonical id),
// CodeInvalidCode / CodeInvalidArguments (replacement code), CodeConflict
// (already resolved, cancelled or expired; the block's binding changed
// since it was submitted — reason nested_changed, reclassified,
// catalogue_drift, unbound: the approval stays pending, as the block
// analyses now, to be reviewed again; not_read_only for an auto_run
// that would grant a state-changing procedure while mutating auto-run is
// off — the approval stays pending).
func (g *Gate) Resolve(ctx context.Context, req ResolveRequest) (*Turn, audit.Decision, error) {
	fail := func(err error) (*Turn, audit.Decision, error) { return nil, audit.Decision{}, err }
	if !req.HasGrant {
		return fail(fault.Errorf(fault.CodeForbidden, "resolving an approval needs the grant scope"))
	}
	if !req.Choice.Valid() {
		return fail(fault.Errorf(fault.CodeInvalid, "choice %q is not run_once, auto_run, always_ask, reject or run_all", req.Choice).WithDetails("field", "choice"))
	}
	if len(req.Reason) > fields.MaxReasonBytes {
		return fail(fault.Errorf(fault.CodeInvalid, "reason is longer than %d bytes", fields.MaxReasonBytes).WithDetails("field", "reason"))
	}
	if req.Actor == "" {
		req.Actor = "anonymous"
	}
	cur, err := g.load(ctx, req.ID)
	if err != nil {
		return fail(err)
	}
	if cur.Status != TurnPending {
		return fail(fault.Errorf(fault.CodeConflict, "turn %s is %s: it can no longer be resolved", cur.ID, cur.Status).
			WithDetails("reason", "status").WithDetails("status", string(cur.Status)))
	}
	if err := checkCall(cur, req); err != nil {
		return fail(err)
	}
	next := *cur
	code := cur.Code
	if req.Code != nil && req.Choice.Runs() {
		code = *req.Code
	}
	b, err := g.turnBlock(ctx, cur, code)
	if err != nil {
		return fail(err)
	}
	// The operator reviewed the block as it was submitted: if what it
	// binds to changed since (a nested procedure captured, a catalogue
	// change), they must look again before it can run.
	if req.Code == nil && req.Choice.Runs() {
		if why := cur.Binding.Check(g.bindingNow(b, cur.Binding)); why != "" {
			return fail(g.reviewAgain(ctx, cur, b, why))
		}
	}
	next.Turn = turnOf(b, next.Turn)
	next.Code = code
	next.Binding = b.Binding
	if req.Code != nil && req.Choice.Runs() {
		// An edited block replaces the paused run: it runs as an
		// approved block, whole.
		next.Pause, next.Call = nil, nil
	}
	only, _ := procOnlyOf(b)
	if req.Choice == ChoiceAutoRun && only {
		if err := g.checkGrantable(b); err != nil {
			return fail(err)
		}
	}
	v := decide.ResolveVerdict(req.Choice.Runs())
	now := g.r.Now().UTC().Truncate(time.Millisecond)
	next.Resolution = &Resolution{Choice: req.Choice, By: req.Actor, At: now, Reason: strings.TrimSpace(req.Reason), CodeHash: b.Analysis.CodeHash,
		Call: CallOf(next.Pause)}
	next.Status = TurnApproved
	approval := auditOf(next.Turn)
	approval.Kind, approval.Procedure, approval.CodeHash, approval.Phase = audit.KindApproval, b.Analysis.Name, b.Analysis.CodeHash, cur.Phase
	approval.Outcome, approval.Reason, approval.Actor, approval.Note = v.Outcome, v.Reason, req.Actor, next.Resolution.Reason
	if cur.Pause != nil {
		// The call answered, by its digests (no value): the edited block
		// replaced it, when it was edited.
		approval.Note = strings.TrimSpace(string(req.Choice) + " at " + callNote(cur.Pause) + "; " + approval.Note)
	}
	ds := []audit.Decision{approval}
	if !v.Allowed() {
		next.Status = TurnRejected
		ds = append(ds, g.turnDecision(next.Turn, b, v, []string{}))
	}
	out, built, err := g.transition(ctx, next, []TurnStatus{TurnPending}, true, ds...)
	if err != nil {
		return fail(err)
	}
	if next.Status == TurnApproved {
		g.keep(*cur, code, b) // for its run
	} else {
		g.forget(cur.ID)
	}
	g.notify(cur.ID)
	return &out.Turn, built[0], g.remember(ctx, req, b, only, cur)
}

// reviewAgain stores pending turn cur as it analyses now (b: its
// classification and binding) and returns the CodeConflict (details
// reason why, the turn as now stored) of a resolution that would approve
// what the operator did not see.
func (g *Gate) reviewAgain(ctx context.Context, cur *TurnRecord, b *replay.Block, why string) error {
	next := *cur
	next.Turn = turnOf(b, next.Turn)
	next.Binding = b.Binding
	out, _, err := g.transition(ctx, next, []TurnStatus{TurnPending}, true)
	if err != nil {
		return err
	}
	g.keep(*cur, cur.Code, b) // as it is now stored
	g.notify(cur.ID)
	return fault.Errorf(fault.CodeConflict, "turn %s changed since it was submitted (%s): review it again", cur.ID, why).
		WithDetails("reason", why).WithDetails("turn", out.Turn)
}

// checkGrantable refuses an auto_run whose grants the rule of
// set_procedure_auto_run (procedures.Service.Grantable) would refuse.
func (g *Gate) checkGrantable(b *replay.Block) error {
	for _, n := range b.Analysis.ProcRefs {
		p := b.Refs[n]
		if p == nil {
			return fault.Errorf(fault.CodeNotFound, "no procedure %s to grant auto-run to", n)
		}
		switch why := g.svc.Grantable(p); why {
		case audit.ReasonProcedureNotSucceeded:
			return fault.Errorf(fault.CodeConflict, "auto-run cannot be granted to %s: it did not succeed", n).WithDetails("reason", why)
		case audit.ReasonNotReadOnly:
			return fault.Errorf(fault.CodeConflict, "auto-run cannot be granted to %s: it changes state and mutating auto-run is off", n).WithDetails("reason", why)
		}
	}
	return nil
}

// remember stores what auto_run and always_ask remember.
func (g *Gate) remember(ctx context.Context, req ResolveRequest, b *replay.Block, procOnly bool, cur *TurnRecord) error {
	switch {
	case req.Choice == ChoiceAutoRun && procOnly:
		for _, n := range b.Analysis.ProcRefs {
			if _, _, err := g.svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: n, Enabled: true, Reason: req.Reason, Actor: req.Actor}); err != nil {
				return err
			}
		}
	case req.Choice == ChoiceAutoRun || req.Choice == ChoiceAlwaysAsk:
		g.withProgram(b)
		_, err := g.SetPolicy(ctx, SessionPolicy{SessionID: cur.SessionID, CodeHash: b.Analysis.CodeHash,
			Policy: req.Choice, Summary: cur.Summary, SetBy: req.Actor, RequestedBy: cur.RequestedBy, Binding: b.Binding}, req.Reason)
		return err
	}
	return nil
}

// Approval is an approval as operators review it (docs/api.md "Approval").
type Approval struct {
	Turn
	Code       string              `json:"code"`
	Arguments  map[string]any      `json:"arguments"`
	Procedures []ApprovalProcedure `json:"procedures"`
	// Nested is every proc__ the block may reach, each level, as the
	// turn's binding holds it (procedures.Service.Reach): what an approval
	// lets run. Empty once the turn no longer waits to run.
	Nested []binding.Reached `json:"nested"`
	// Covers says, for each choice, what answering it covers. Empty once
	// the turn is resolved.
	Covers []Cover `json:"covers"`
	// Call is the call a turn reviewed at the call is paused at (nil
	// otherwise), with the arguments the program evaluated (only to the
	// grant scope, as Arguments).
	Call *ApprovalCall `json:"call,omitempty"`
	// Reads are the calls the run made before the pause, each with a
	// bounded, escaped view of its answer (only to the grant scope, as
	// recordings are; [] otherwise or when there are none).
	Reads []Read `json:"reads"`
}

// ApprovalCall is the call an approval at the call answers: its TurnCall
// and the arguments as the program evaluated them (nil without the grant
// scope).
type ApprovalCall struct {
	TurnCall
	Arguments map[string]any `json:"arguments,omitempty"`
}

// Read is one call a run made before it paused, as a review shows it:
// the tool, its arguments and its answer as JSON text with every hidden
// character a JSON escape (text.VisibleJSON), cut at
// fields.MaxReviewReadBytes (Truncated; Bytes is the whole answer's
// length).
type Read struct {
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
	Response  string         `json:"response"`
	Truncated bool           `json:"truncated"`
	Bytes     int            `json:"bytes"`
}

// ApprovalProcedure is a proc__ an approval's block references.
type ApprovalProcedure struct {
	Name     string `json:"name"`
	ReadOnly bool   `json:"read_only"`
	AutoRun  bool   `json:"auto_run"`
}

// Approval returns one approval; argument values only when showArgs (the
// caller holds grant). Errors: CodeNotFound.
func (g *Gate) Approval(ctx context.Context, id string, showArgs bool) (*Approval, error) {
	cur, err := g.load(ctx, id)
	if err != nil {
		return nil, err
	}
	return g.approvalOf(ctx, cur, showArgs)
}

// Approvals lists approvals, newest first.
func (g *Gate) Approvals(ctx context.Context, f ApprovalFilter, showArgs bool) ([]*Approval, error) {
	recs, err := g.turns.ListApprovals(ctx, f)
	if err != nil {
		return nil, err
	}
	out := make([]*Approval, 0, len(recs))
	now := g.r.Now()
	for _, r := range recs {
		if r.Status == TurnPending && !r.Live(now) {
			if f.Status == TurnPending {
				continue // no longer pending, whether or not it was marked yet
			}
			r.Status = TurnExpired // shown as it is; stored at the next touch
			r.Code, r.Arguments = "", nil
		}
		r, _, err := g.settleRun(ctx, r)
		if err != nil {
			return nil, err
		}
		a, err := g.approvalOf(ctx, r, showArgs)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func (g *Gate) approvalOf(ctx context.Context, r *TurnRecord, showArgs bool) (*Approval, error) {
	a := &Approval{Turn: r.Turn, Code: r.Code, Procedures: []ApprovalProcedure{}, Nested: []binding.Reached{}, Covers: []Cover{}}
	if r.Status == TurnPending || r.Status == TurnApproved {
		nested, err := g.svc.Reach(ctx, r.Binding)
		if err != nil {
			return nil, err
		}
		a.Nested = nested
	}
	if r.Status == TurnPending {
		a.Covers = Covers(coverScope(r))
	}
	if showArgs {
		a.Arguments = r.Arguments
	}
	a.Reads = []Read{}
	if r.Status == TurnPending && r.Call != nil {
		a.Call = &ApprovalCall{TurnCall: *r.Call}
		if showArgs && r.Pause != nil {
			a.Call.Arguments, a.Reads = r.Pause.Arguments, readsOf(r.Pause)
		}
	}
	var refs []string
	for _, n := range r.Signature {
		if procedures.IsProcName(n) {
			refs = append(refs, n)
		}
	}
	if len(refs) > 0 {
		if blk, err := g.svc.ClassifyBlock(ctx, &signature.Analysis{Signature: r.Signature}); err == nil {
			for _, n := range refs {
				ap := ApprovalProcedure{Name: n}
				if p := blk.Refs[n]; p != nil {
					ap.ReadOnly, ap.AutoRun = p.ReadOnly, p.AutoRun.Active
				}
				a.Procedures = append(a.Procedures, ap)
			}
		}
	}
	return a, nil
}
