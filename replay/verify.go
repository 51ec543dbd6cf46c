package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/jsonvalue"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/recording"
	"github.com/procgraph/procgraph/sandbox"
	"github.com/procgraph/procgraph/schemas"
)

// The outcomes of verifying a version against one recording (docs/design.md
// "Verification against recorded tool responses").
const (
	VerifyPassed        = "passed"
	VerifyChangedResult = "changed_result"
	VerifyDiverged      = "diverged"
	VerifyInvalidCall   = "invalid_call"
	VerifyFailed        = "failed"
)

// VerifyResult is the outcome of one recording: Call (from 0) names the
// call that diverged or was invalid; Detail says why, never a value.
type VerifyResult struct {
	Recording string `json:"recording"`
	Outcome   string `json:"outcome"`
	Call      *int   `json:"call,omitempty"`
	Detail    string `json:"detail,omitempty"`
}

// Verification is recording.Verification (the summary kept on the
// version).
type Verification = recording.Verification

// VerifyAnswer is a verification and its results, in the recordings' order
// (newest first).
type VerifyAnswer struct {
	Procedure    string         `json:"procedure"`
	CodeHash     string         `json:"code_hash"`
	Verification Verification   `json:"verification"`
	Results      []VerifyResult `json:"results"`
}

// Verify replays the version codeHash of the procedure name ("" its
// current one) in the sandbox against each of its recordings, with no
// upstream call: the n-th tool call must be the recorded n-th (tool and
// JSON-equal arguments) and gets the recorded answer, its arguments must
// satisfy the tool's input schema in the current catalogue, and the result
// must hash as recorded. It is admitted as an invoke by actor (one slot
// for the whole verification). A verification that passes under the
// current catalogue clears the version's drift and, when it is the current
// version, lifts the procedure's demotion (Service.LiftVerified). A verification its caller
// cuts short (ctx done) stores nothing: the version keeps its last one.
// Returns fault.CodeNotFound for an unknown procedure or version,
// fault.CodeUnavailable when cut short.
func (r *Replayer) Verify(ctx context.Context, name, codeHash, actor string) (*VerifyAnswer, error) {
	return r.verify(ctx, name, codeHash, actor, false)
}

// spareRetry is how often a background verification looks for a spare
// sandbox slot (sandbox.Admission.TryAcquireSpare).
const spareRetry = 50 * time.Millisecond

// verify is Verify; a background one (spare) runs only in a spare sandbox
// slot, waiting for one as long as ctx lasts, and never queues ahead of a
// live replay.
func (r *Replayer) verify(ctx context.Context, name, codeHash, actor string, spare bool) (*VerifyAnswer, error) {
	if codeHash == "" {
		p, err := r.svc.Get(ctx, name)
		if err != nil {
			return nil, err
		}
		codeHash = p.CodeHash
	}
	v, err := r.svc.VersionView(ctx, name, codeHash)
	if err != nil {
		return nil, err
	}
	recs, err := r.svc.VersionRecordings(ctx, name, codeHash)
	if err != nil {
		return nil, err
	}
	cat, err := r.svc.Catalogue(ctx)
	if err != nil {
		return nil, err
	}
	ans := &VerifyAnswer{Procedure: name, CodeHash: codeHash, Results: []VerifyResult{},
		Verification: Verification{Status: "none", At: r.now().UTC(), CatalogueRevision: cat.Revision}}
	if len(recs) == 0 {
		return ans, nil
	}
	caller := ctx
	if a := r.opts.Admission; a != nil && spare {
		release, err := spareSlot(ctx, a, actor)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	ctx, cancel := context.WithDeadline(ctx, r.now().Add(r.timeout()))
	defer cancel()
	if a := r.opts.Admission; a != nil && !spare {
		release, err := a.Acquire(ctx, actor)
		if err != nil {
			return nil, busyError(err)
		}
		defer release()
	}
	b, aerr := analyse(v.Code, v.Dialect)
	if aerr == nil && b.Analysis.CodeHash != codeHash {
		aerr = fault.Errorf(fault.CodeInvalid, "the stored code analyses to another code hash")
	}
	for _, rec := range recs {
		res := VerifyResult{Recording: rec.ID}
		if aerr != nil {
			res.Outcome, res.Detail = VerifyFailed, "the stored code does not analyse: "+fault.ErrorMessage(aerr)
		} else {
			res = r.verifyOne(ctx, b, v, rec, cat)
		}
		ans.Results = append(ans.Results, res)
		if res.Outcome == VerifyPassed {
			ans.Verification.Passed++
		}
	}
	if err := caller.Err(); err != nil {
		// Cut short by its caller (gone, or shut down): its runs did not
		// finish, and the version keeps the verification it had.
		return nil, fault.Errorf(fault.CodeUnavailable, "the verification of %s was cut short: %v", name, err)
	}
	ans.Verification.Recordings = len(recs)
	ans.Verification.Status = "failed"
	if ans.Verification.Passed == len(recs) {
		ans.Verification.Status = "passed"
		if v.Stale {
			if err := r.svc.ClearDrift(context.WithoutCancel(ctx), name, codeHash, cat.Revision); err != nil {
				r.log.Warn().Err(err).Str("procedure", name).Str("code_hash", codeHash).Msg("verify: a passed verification could not clear the version's drift")
			}
		}
	}
	if err := r.svc.SetVerification(context.WithoutCancel(ctx), name, codeHash, ans.Verification); err != nil { // not reached without a recording
		r.log.Warn().Err(err).Str("procedure", name).Str("code_hash", codeHash).Msg("verify: the verification could not be kept")
	}
	if ans.Verification.Status == "passed" {
		// It reproduces its recorded runs under the current catalogue: a
		// demotion of it as the current version is lifted (docs/design.md
		// "Health of each version").
		if _, err := r.svc.LiftVerified(context.WithoutCancel(ctx), name, codeHash, cat.Revision, len(recs)); err != nil {
			r.log.Warn().Err(err).Str("procedure", name).Str("code_hash", codeHash).Msg("verify: a passed verification could not lift the procedure's demotion")
		}
	}
	r.log.Info().Str("procedure", name).Str("code_hash", codeHash).Str("status", ans.Verification.Status).
		Int("recordings", len(recs)).Int("passed", ans.Verification.Passed).Msg("verify")
	return ans, nil
}

// spareSlot waits, as long as ctx lasts, for a sandbox slot a can spare
// (sandbox.Admission.TryAcquireSpare), polling every spareRetry.
func spareSlot(ctx context.Context, a *sandbox.Admission, actor string) (release func(), err error) {
	t := time.NewTicker(spareRetry)
	defer t.Stop()
	for {
		if release, ok := a.TryAcquireSpare(actor); ok {
			return release, nil
		}
		select {
		case <-ctx.Done():
			return nil, fault.Errorf(fault.CodeUnavailable, "no sandbox slot was spare before the verification was given up: %v", ctx.Err())
		case <-t.C:
		}
	}
}

// verifyOne runs b (the version v) against rec.
func (r *Replayer) verifyOne(ctx context.Context, b *Block, v *procedures.Version, rec recording.Recording,
	cat *procedures.Catalogue) VerifyResult {
	out := VerifyResult{Recording: rec.ID}
	schema, err := r.schemas.get(v.CodeHash, b.Analysis.Parameters, v.InputSchema)
	if err != nil {
		out.Outcome, out.Detail = VerifyFailed, "the version's input schema does not compile"
		return out
	}
	blk := *b
	if err := blk.bind(schema, rec.Arguments); err != nil {
		out.Outcome, out.Detail = VerifyInvalidCall, "the recorded arguments no longer match the version's input schema: "+fault.ErrorMessage(err)
		return out
	}
	vc := &verifyCaller{rec: rec, cat: cat}
	res := r.runner.Run(ctx, sandbox.Request{Filename: rec.Procedure + ".star", Source: b.Analysis.Source, Args: blk.Args,
		Allowed: b.Analysis.Signature, Limits: r.opts.Limits}, vc)
	switch {
	case vc.outcome != "":
		out.Outcome, out.Call, out.Detail = vc.outcome, &vc.at, vc.detail
	case res.Err != nil:
		out.Outcome, out.Detail = VerifyFailed, FailureClass(res.Err)
	case vc.n < len(rec.Calls):
		n := vc.n
		out.Outcome, out.Call, out.Detail = VerifyDiverged, &n, fmt.Sprintf("the run made %d calls, the recording %d", vc.n, len(rec.Calls))
	default:
		got, err := recording.ResultHash(res.Value)
		switch {
		case err != nil:
			out.Outcome, out.Detail = VerifyFailed, "the result does not encode as JSON"
		case got != rec.ResultHash:
			out.Outcome, out.Detail = VerifyChangedResult, "the result differs from the recorded one"
		default:
			out.Outcome = VerifyPassed
		}
	}
	return out
}

// verifyCaller answers a verification's tool calls from its recording and
// notes the first call that diverges from it or fails the tool's current
// input schema (its outcome, the call's index and why); it never calls
// anything.
type verifyCaller struct {
	rec     recording.Recording
	cat     *procedures.Catalogue
	n       int // calls answered
	outcome string
	at      int
	detail  string
}

// CallTool answers the n-th call with the n-th recorded answer.
func (c *verifyCaller) CallTool(_ context.Context, name string, args map[string]any) (any, error) {
	stop := func(outcome, format string, a ...any) (any, error) {
		c.outcome, c.at, c.detail = outcome, c.n, fmt.Sprintf(format, a...)
		return nil, &sandbox.Error{Code: sandbox.ToolRefused, Tool: name, Message: "verification: " + c.detail}
	}
	if c.outcome != "" {
		return nil, &sandbox.Error{Code: sandbox.ToolRefused, Tool: name, Message: "verification: " + c.detail}
	}
	if c.n >= len(c.rec.Calls) {
		return stop(VerifyDiverged, "call %d (tools.%s) is not in the recording, which has %d", c.n, name, len(c.rec.Calls))
	}
	want := c.rec.Calls[c.n]
	if want.Tool != name {
		return stop(VerifyDiverged, "call %d is tools.%s, the recording's tools.%s", c.n, name, want.Tool)
	}
	if !sameJSON(args, want.Arguments) {
		return stop(VerifyDiverged, "call %d (tools.%s) has other arguments than the recording's", c.n, name)
	}
	if why := c.invalid(name, args); why != "" {
		return stop(VerifyInvalidCall, "call %d (tools.%s): %s", c.n, name, why)
	}
	c.n++
	if want.Error != "" {
		return nil, &sandbox.Error{Code: sandbox.ToolFailed, Tool: name, Message: want.Error}
	}
	return jsonvalue.Numbers(want.Response)
}

// invalid is why args fail the current input schema of tool ("" when they
// satisfy it, or the catalogue does not have the tool: a proc__ call, or a
// tool whose removal drift already reports).
func (c *verifyCaller) invalid(tool string, args map[string]any) string {
	if procedures.IsProcName(tool) {
		return ""
	}
	s, known, err := procedures.ToolInputSchema(c.cat, tool)
	switch {
	case !known || (s == nil && err == nil):
		return ""
	case err != nil:
		return "its input schema in the catalogue does not compile"
	}
	norm, err := jsonvalue.Numbers(args)
	if err != nil {
		return "its arguments are not JSON"
	}
	if err := s.Validate(norm); err != nil {
		return "its arguments break its input_schema: " + schemas.SchemaMessage(schemas.SchemaViolations(err))
	}
	return ""
}

// sameJSON reports whether a and b encode to the same JSON (keys sorted,
// numbers as written: 1 and 1.0 are the same).
func sameJSON(a, b map[string]any) bool {
	na, err1 := jsonvalue.Numbers(a)
	nb, err2 := jsonvalue.Numbers(b)
	if err1 != nil || err2 != nil {
		return false
	}
	ja, err1 := json.Marshal(na)
	jb, err2 := json.Marshal(nb)
	return err1 == nil && err2 == nil && slices.Equal(ja, jb)
}
