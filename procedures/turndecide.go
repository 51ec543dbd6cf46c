package procedures

// TurnInput is everything the decision on a turn depends on. It holds no
// code and no argument values.
type TurnInput struct {
	// Phase: anything but interactive is treated as automatic (fail closed).
	Phase Phase
	// ReadOnly is the turn's classification under the current catalogue.
	ReadOnly bool
	// Problem is the classification's nesting problem, "" when none.
	Problem string
	// ProcOnly: every signature entry is a proc__ reference.
	ProcOnly bool
	// GrantsActive: every proc__ entry has an active durable grant.
	GrantsActive bool
	// Policy is the session's policy for the code hash, "" when none.
	Policy Choice
}

// TurnVerdict is the outcome of DecideTurn.
type TurnVerdict struct {
	// Pending: an operator must decide (reason review_required); Outcome
	// is then Denied until they do (nothing runs).
	Pending bool
	Outcome Outcome
	Reason  string
	// StateChanging: the verdict lets state-changing tools run.
	StateChanging bool
	// Suggestion says what to do instead, for some denials.
	Suggestion string
}

// Allowed reports whether the turn may run now.
func (v TurnVerdict) Allowed() bool { return v.Outcome == Allowed && !v.Pending }

// SuggestInteractiveTurn is the suggestion attached to a turn denied in the
// automatic phase.
const SuggestInteractiveTurn = "this block is not read-only: submit it in the interactive phase, where an operator reviews it"

// DecideTurn applies docs/design.md's turn table to a new turn. It is pure and
// the one home of that table; ResolveVerdict and ExpiredVerdict are its
// last rows.
func DecideTurn(in TurnInput) TurnVerdict {
	allow := func(reason string, sc bool) TurnVerdict {
		return TurnVerdict{Outcome: Allowed, Reason: reason, StateChanging: sc}
	}
	switch {
	case in.Problem != "":
		return TurnVerdict{Outcome: Denied, Reason: in.Problem}
	case in.Phase != PhaseInteractive:
		if in.ReadOnly {
			return allow(ReasonReadOnly, false)
		}
		return TurnVerdict{Outcome: Denied, Reason: ReasonStateChangingAuto, Suggestion: SuggestInteractiveTurn}
	case in.ProcOnly && in.GrantsActive:
		return allow(ReasonDurableAutoRun, true)
	case in.Policy == ChoiceAutoRun:
		return allow(ReasonSessionPolicy, true)
	}
	// New code is always reviewed, read-only code too.
	return TurnVerdict{Pending: true, Outcome: Denied, Reason: ReasonReviewRequired}
}

// ResolveVerdict is the turn's verdict once an operator chose c: every
// choice but reject runs it (state-changing tools included: the operator
// saw them); reject and anything unknown deny it.
func ResolveVerdict(c Choice) TurnVerdict {
	if c.Runs() {
		return TurnVerdict{Outcome: Allowed, Reason: ReasonOperatorApproved, StateChanging: true}
	}
	return TurnVerdict{Outcome: Denied, Reason: ReasonOperatorRejected}
}

// ExpiredVerdict is the verdict on a turn past its deadline.
func ExpiredVerdict() TurnVerdict {
	return TurnVerdict{Outcome: Denied, Reason: ReasonApprovalExpired}
}
