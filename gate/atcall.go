package gate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/decide"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/internal/jsonvalue"
	"github.com/procgraph/procgraph/internal/text"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/usage"
)

// The review at the call (docs/design.md "Review at the call"; ADR 0045
// for the engine, ADR 0053 for the gate): a turn that needs review and
// asks for ReviewAtCall runs at once under the read-only allow-set and
// stops before its first state-changing call (replay.RunAtCall); the turn
// is then pending with its pause stored (TurnRecord.Pause: nothing live
// is held), each answer binds to the call, and the approved turn's run
// is a resume (replay.ResumeAtCall), claimed once per pause in the store
// (CheckPause), which ends, pauses again or diverges.

// reviewOf sets req.Review to the review the turn gets: its own, else the
// gate's default. An unknown one is CodeInvalid (field review).
func (g *Gate) reviewOf(req *TurnRequest) error {
	if req.Review == "" {
		req.Review = g.opts.ReviewDefault
	}
	if !req.Review.Valid() {
		return fault.Errorf(fault.CodeInvalid, "review %q is not block or at_call", req.Review).WithDetails("field", "review")
	}
	return nil
}

// callNote names the call of pause p in an audit record, with digests
// only: its position, tool, schema hash and the digest of its arguments.
func callNote(p *replay.Pause) string {
	if p == nil {
		return ""
	}
	return fmt.Sprintf("call %d tools.%s schema %s args %s", p.Position, p.Tool, p.SchemaHash, p.ArgsDigest)
}

// lostNote is the note of the ending of a lost run (Gate.endLost) of a
// turn claimed at call c (nil: a block, ""): the call by its digests,
// never sent again.
func lostNote(c *TurnCall) string {
	if c == nil {
		return ""
	}
	return fmt.Sprintf("run lost after the claim of call %d tools.%s schema %s args %s; never sent again", c.Position, c.Tool, c.SchemaHash, c.ArgsDigest)
}

// pauseDecision is the audit record of turn t pausing at p: kind turn,
// denied until an operator answers (review_required), the call named by
// its digests (callNote).
func (g *Gate) pauseDecision(t Turn, b *replay.Block, p *replay.Pause) audit.Decision {
	d := g.turnDecision(t, b, decide.Verdict{Outcome: audit.Denied, Reason: audit.ReasonReviewRequired}, []string{})
	d.Note = "paused at " + callNote(p)
	return d
}

// submitAtCall runs turn t, which needs review and asked for it at the
// call: under the read-only allow-set, stopped before its first
// state-changing call. A run that makes none ends as the same block would
// in the automatic phase (answered, counted, captured when asked); one
// that stops becomes a pending approval at that call (ask). The waiter's
// place, when req waits, is taken by the caller (release).
func (g *Gate) submitAtCall(ctx context.Context, req TurnRequest, b *replay.Block, t Turn, arrived time.Time, release func()) (*TurnAnswer, error) {
	t.Deadline = t.RequestedAt.Add(g.r.Timeout()) // the answer's, when it ends now
	runCtx, cancel := context.WithDeadline(ctx, arrived.Add(g.r.Timeout()))
	defer cancel()
	admitted, err := g.r.Admit(runCtx, req.Actor)
	if err != nil {
		return nil, err
	}
	defer admitted()
	allowed := replay.AllowSet(b.Analysis.Signature, b.Class, decide.Verdict{Outcome: audit.Allowed, StateChanging: true})
	reads := replay.AllowSet(b.Analysis.Signature, b.Class, decide.Verdict{Outcome: audit.Allowed})
	d, err := g.r.Record(runCtx, g.turnDecision(t, b, decide.Verdict{Outcome: audit.Allowed, Reason: audit.ReasonReviewAtCall}, reads))
	if err != nil {
		return nil, err
	}
	started := g.r.Now()
	pending := &replay.Pending{}
	res, err := g.r.RunAtCall(runCtx, replay.RunRequest{Block: b, Decision: d, Allowed: allowed, UsageKey: usage.UsageKey(t.SessionID, ""),
		Bound: b.Binding, Pending: pending,
		Request: replay.InvokeRequest{Name: b.Analysis.Name, Phase: t.Phase, SessionID: t.SessionID, Actor: t.RequestedBy}})
	admitted()
	if err != nil {
		_ = g.r.Commit(ctx, pending) // the reads' nested records, if any; logged on failure
		return nil, err
	}
	if res.Pause == nil {
		ans, ran := g.ended(t, d, res, pending, started)
		captured := g.capture(ctx, ans, req.Code, req.Dialect, req.Capture)
		if err := g.count(ctx, ans, b, ran, captured); err != nil {
			return nil, err
		}
		return ans, nil
	}
	g.countPause(t, b, pending, started)
	_ = g.r.Commit(ctx, pending) // the reads' use and nested records; logged on failure
	rec := TurnRecord{Turn: t, Code: req.Code, Dialect: req.Dialect, Arguments: b.Arguments, Capture: req.Capture, Binding: b.Binding, Pause: res.Pause}
	rec.Status, rec.Call = TurnPending, CallOf(res.Pause)
	rec.Deadline = t.RequestedAt.Add(g.opts.ApprovalTimeout)
	return g.ask(ctx, req, rec, b, release)
}

// countPause adds to pending the use of turn t's run of b that stopped
// at a pause (started at started): its calls were made and answered, so
// it counts in the health of the stored version whose code it ran, as a
// success, as a run that ends does (ranBlock, addUse) and with it in one
// commit — whatever the answer at the pause, which may never run the
// block again (rejected, expired). No recording: the run has no result.
// Each run counts once: the run at the call here, each resume at its next
// pause or its end.
func (g *Gate) countPause(t Turn, b *replay.Block, pending *replay.Pending, started time.Time) {
	run := health.Run{Duration: g.r.Now().Sub(started), Caller: t.RequestedBy}
	if in, ok := g.svc.BlockUse(b.Analysis.Name, t.CodeHash, usage.UsageKey(t.SessionID, ""), run, procedures.Kept{}); ok {
		pending.Use(in)
	}
}

// ended is the answer of a run at the call that ended (res.Result), and
// what it leaves to count (ranBlock), as execute's.
func (g *Gate) ended(t Turn, d audit.Decision, res *replay.AtCallResult, pending *replay.Pending, started time.Time) (*TurnAnswer, ranBlock) {
	out := res.Result
	t.Status = TurnSucceeded
	if out.Status != replay.StatusSucceeded {
		t.Status = TurnFailed
	}
	g.r.Logger().Info().Str("turn", t.ID).Str("decision", d.ID).Str("code_hash", t.CodeHash).Str("status", out.Status).
		Ints("dispatched", res.Dispatched).Msg("turn run at the call")
	run := health.Run{Failure: replay.FailureClass(out.Error), Duration: g.r.Now().Sub(started), Caller: t.RequestedBy}
	ran := ranBlock{run: run, pending: pending}
	if g.r.RecordsResponses() {
		ran.calls = res.Calls
	}
	return &TurnAnswer{InvokeResult: out, Turn: t}, ran
}

// resume runs the approved turn cur, paused at a call and claimed
// running (running, with its claim's decision d), again from the start on
// its pause's record: the approved call (and with run_all or auto_run
// every later state-changing one) dispatched once. It pauses again (the
// turn pending at the next call, one more pause), ends (finish), or is
// refused with nothing dispatched (endResume).
func (g *Gate) resume(ctx context.Context, cur *TurnRecord, running TurnRecord, b *replay.Block, d audit.Decision, allowed []string) (*TurnAnswer, error) {
	r := cur.Resolution
	a := cur.Pause.Approval(r.Choice == ChoiceRunAll || r.Choice == ChoiceAutoRun)
	started := g.r.Now()
	pending := &replay.Pending{}
	res, err := g.r.ResumeAtCall(ctx, replay.RunRequest{Block: b, Decision: d, Allowed: allowed, UsageKey: usage.UsageKey(cur.SessionID, ""),
		Bound: b.Binding, Pending: pending,
		Request: replay.InvokeRequest{Name: b.Analysis.Name, Phase: cur.Phase, SessionID: cur.SessionID, Actor: cur.RequestedBy,
			ReviewedBy: r.By, ReviewerHasGrantScope: r.By != ""}}, cur.Pause, a)
	if err != nil {
		_ = g.r.Commit(ctx, pending) // logged on failure
		return nil, g.endResume(ctx, running, b, err)
	}
	g.recordDispatched(ctx, running.Turn, b, res)
	if res.Pause != nil {
		g.countPause(running.Turn, b, pending, started)
		_ = g.r.Commit(ctx, pending) // as above
		next := running
		next.Status, next.Pause, next.Call, next.Resolution = TurnPending, res.Pause, CallOf(res.Pause), nil
		next.Pauses++
		out, _, err := g.transition(context.WithoutCancel(ctx), next, []TurnStatus{TurnRunning}, false, g.pauseDecision(next.Turn, b, res.Pause))
		if err != nil {
			g.r.Logger().Error().Err(err).Str("turn", cur.ID).Msg("turn: the run paused again, but the pause could not be stored")
			return nil, err
		}
		g.keep(*out, out.Code, b)
		g.r.Logger().Info().Str("turn", cur.ID).Str("code_hash", cur.CodeHash).Int("pauses", out.Pauses).Ints("dispatched", res.Dispatched).
			Msg("turn paused again at a call: an operator must decide")
		g.notify(cur.ID)
		return &TurnAnswer{Turn: out.Turn}, nil
	}
	ans, ran := g.ended(running.Turn, d, res, pending, started)
	g.finish(ctx, running, ans, b, ran)
	g.notify(cur.ID)
	return ans, nil
}

// recordDispatched records the state-changing calls a resume dispatched
// (res.Dispatched: the approved call, and with run_all or auto_run the
// later ones), each by its position, tool and the digest of its
// arguments, in one audit record (kind turn, operator_approved). A
// failure is logged: the calls were made.
func (g *Gate) recordDispatched(ctx context.Context, t Turn, b *replay.Block, res *replay.AtCallResult) {
	if len(res.Dispatched) == 0 {
		return
	}
	var note strings.Builder
	note.WriteString("dispatched")
	for _, i := range res.Dispatched {
		if i >= len(res.Calls) {
			continue
		}
		c := res.Calls[i]
		digest, err := jsonvalue.Digest(c.Arguments)
		if err != nil {
			digest = "none"
		}
		fmt.Fprintf(&note, " call %d tools.%s args %s;", i, c.Tool, digest)
	}
	d := g.turnDecision(t, b, decide.Verdict{Outcome: audit.Allowed, Reason: audit.ReasonOperatorApproved}, []string{})
	d.Note = strings.TrimSuffix(note.String(), ";")
	if _, err := g.r.Record(context.WithoutCancel(ctx), d); err != nil {
		g.r.Logger().Error().Err(err).Str("turn", t.ID).Msg("turn: the calls a resume dispatched could not be recorded")
	}
}

// endResume ends the running turn whose resume was refused with err
// (nothing dispatched: replay.ResumeAtCall's errors come before its
// dispatch, or are the next pause's, after it): a divergence (or an
// approval that is not the pause's) denies it, reason diverged, the
// refusal carrying the turn as stored; any other error fails it.
func (g *Gate) endResume(ctx context.Context, running TurnRecord, b *replay.Block, err error) error {
	ctx = context.WithoutCancel(ctx)
	next := running
	next.Status = TurnFailed
	var ds []audit.Decision
	var fe *fault.Error
	diverged := errors.As(err, &fe) && fe.Code == fault.CodeConflict &&
		(fe.Details["reason"] == replay.ReasonDiverged || fe.Details["reason"] == replay.ReasonApprovalMismatch)
	if diverged {
		next.Status = TurnDenied
		d := g.turnDecision(running.Turn, b, decide.Verdict{Outcome: audit.Denied, Reason: audit.ReasonDiverged}, []string{})
		d.Note = fmt.Sprintf("resume of %s diverged at call %v; nothing dispatched", callNote(running.Pause), fe.Details["call"])
		ds = append(ds, d)
	}
	out, _, terr := g.transition(ctx, next, []TurnStatus{TurnRunning}, false, ds...)
	if terr != nil {
		g.r.Logger().Error().Err(terr).Str("turn", running.ID).Msg("turn: the refused resume could not be stored")
	}
	g.forget(running.ID)
	g.notify(running.ID)
	g.r.Logger().Warn().Str("turn", running.ID).Str("code_hash", running.CodeHash).Str("status", string(next.Status)).
		Str("code", string(fault.ErrorCode(err))).Msg("turn: the resume at the call was refused")
	if diverged && out != nil {
		return fe.WithDetails("turn", out.Turn)
	}
	return err
}

// checkCall refuses an answer that names a call (req.Call) other than
// the one the pending turn cur is paused at, and run_all for a turn not
// paused at a call.
func checkCall(cur *TurnRecord, req ResolveRequest) error {
	if req.Choice == ChoiceRunAll && cur.Pause == nil {
		return fault.Errorf(fault.CodeInvalid, "run_all answers a turn paused at a call; turn %s is reviewed as a block", cur.ID).WithDetails("field", "choice")
	}
	if c := req.Call; c != nil && (cur.Pause == nil || c.Position != cur.Pause.Position || c.ArgsDigest != cur.Pause.ArgsDigest) {
		return fault.Errorf(fault.CodeConflict, "turn %s is not paused at the call answered: review it again", cur.ID).
			WithDetails("reason", ReasonCallChanged).WithDetails("turn", cur.Turn)
	}
	return nil
}

// readsOf is the review of the calls before pause p: each answer as JSON
// text with hidden characters escaped (text.VisibleJSON), cut at
// fields.MaxReviewReadBytes.
func readsOf(p *replay.Pause) []Read {
	out := make([]Read, 0, len(p.Calls))
	for _, c := range p.Calls {
		v := string(text.VisibleJSON(c.Response))
		r := Read{Tool: c.Tool, Arguments: c.Arguments, Response: v, Bytes: len(c.Response)}
		if len(v) > fields.MaxReviewReadBytes {
			r.Response, r.Truncated = text.Bounded(v, fields.MaxReviewReadBytes), true
		}
		out = append(out, r)
	}
	return out
}
