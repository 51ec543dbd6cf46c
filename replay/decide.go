package replay

import "github.com/procgraph/procgraph/procedures"

// DecisionInput is everything a replay decision depends on. It holds no
// argument values and no code.
type DecisionInput struct {
	// Phase is who is watching: automatic (nobody) or interactive (a human).
	// Any value other than interactive is treated as automatic (fail closed).
	Phase procedures.Phase
	// Retired is whether an admin retired the procedure: denied with reason
	// retired, whatever else holds.
	Retired bool
	// Succeeded is whether the version to run was captured as succeeded.
	Succeeded bool
	// ReadOnly is whether the procedure is read-only under the current
	// catalogue, recomputed from its code (never a stored flag).
	ReadOnly bool
	// Problem is the classification's nesting problem (cycle or
	// nesting_too_deep), "" when none: such a procedure is denied with it
	// as the reason, whatever the phase.
	Problem string
	// AllowMutating is whether mutating auto-run is on.
	AllowMutating bool
	// GrantActive is whether a durable auto-run grant is active right now.
	GrantActive bool
	// ReviewedBy names the operator who reviewed this run, if any.
	ReviewedBy string
	// ReviewerHasGrantScope is whether the caller that set ReviewedBy holds
	// the grant scope; without it ReviewedBy counts for nothing.
	ReviewerHasGrantScope bool
}

// Verdict is the outcome of Decide.
type Verdict struct {
	Outcome procedures.Outcome
	Reason  string
	// Suggestion says what to do instead, for some denials.
	Suggestion string
	// StateChanging is whether the verdict lets state-changing tools run:
	// true only for an allowed interactive replay of a state-changing
	// procedure (durable_auto_run or operator_reviewed).
	StateChanging bool
}

// Allowed reports whether the verdict lets the replay run.
func (v Verdict) Allowed() bool { return v.Outcome == procedures.Allowed }

// SuggestInteractive is the suggestion attached to a state-changing
// procedure denied in the automatic phase.
const SuggestInteractive = "this procedure changes state: offer it in the interactive loop, where a human can approve it (phase \"interactive\")"

// SuggestRetired is the suggestion attached to an invoke of a retired
// procedure.
const SuggestRetired = "an admin retired this procedure: it is kept for analysis (GET /v1/procedures/{name} says who and why) but no longer runs; use another procedure"

// Decide applies docs/design.md's "Authorization of a replay" table. It is pure.
// Argument validation happens before it (a failure is a 422 and no
// decision), so it has no row for that.
func Decide(in DecisionInput) Verdict {
	deny := func(reason string) Verdict { return Verdict{Outcome: procedures.Denied, Reason: reason} }
	switch {
	case in.Retired:
		v := deny(procedures.ReasonRetired)
		v.Suggestion = SuggestRetired
		return v
	case !in.Succeeded:
		return deny(procedures.ReasonProcedureNotSucceeded)
	case in.Problem != "":
		return deny(in.Problem)
	case in.ReadOnly:
		return Verdict{Outcome: procedures.Allowed, Reason: procedures.ReasonReadOnly}
	case in.Phase != procedures.PhaseInteractive:
		v := deny(procedures.ReasonStateChangingAuto)
		v.Suggestion = SuggestInteractive
		return v
	case !in.AllowMutating:
		return deny(procedures.ReasonStateChangingDisabled)
	case in.GrantActive:
		return Verdict{Outcome: procedures.Allowed, Reason: procedures.ReasonDurableAutoRun, StateChanging: true}
	case in.ReviewedBy != "" && in.ReviewerHasGrantScope:
		return Verdict{Outcome: procedures.Allowed, Reason: procedures.ReasonOperatorReviewed, StateChanging: true}
	}
	return deny(procedures.ReasonReviewRequired)
}
