package decide

import (
	"strings"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/internal/text"
)

// DecisionInput is everything the decision on a replay or a turn depends
// on. It holds no code and no argument values.
type DecisionInput struct {
	// Turn: the block is a turn (new code an agent submits, docs/design.md
	// "The turn gate"), not the replay of a stored procedure.
	Turn bool
	// Phase is who is watching: automatic (nobody) or interactive (a human).
	// Any value other than interactive is treated as automatic (fail closed).
	Phase audit.Phase
	// Retired (replays) is whether an admin retired the procedure.
	Retired bool
	// Demoted (replays) is whether the procedure is demoted
	// (Procedure.Demoted).
	Demoted bool
	// Succeeded (replays) is whether the version to run was captured as
	// succeeded.
	Succeeded bool
	// ReadOnly is the classification under the current catalogue,
	// recomputed from the code (never a stored flag).
	ReadOnly bool
	// Problem is the classification's nesting problem (cycle or
	// nesting_too_deep), "" when none.
	Problem string
	// UnknownTools (replays) are the names the code calls that neither the
	// catalogue nor the store has (Classification.UnknownTools): a tool
	// its server no longer lists, or one never in the catalogue.
	UnknownTools []string
	// AllowMutating (replays) is whether mutating auto-run is on.
	AllowMutating bool
	// GrantActive is, for a replay, whether the procedure's durable
	// auto-run grant is active right now; for a turn, whether every
	// signature entry is a proc__ reference with an active grant.
	GrantActive bool
	// ReviewedBy (replays) names the operator who reviewed this run, if
	// any; it counts only when ReviewerHasGrantScope (the caller holds the
	// grant scope).
	ReviewedBy            string
	ReviewerHasGrantScope bool
	// PolicyAutoRun (turns): the session's policy for the code hash, one
	// that applies to the requester and whose binding holds, is auto_run.
	PolicyAutoRun bool
}

// Verdict is the outcome of Decide, ResolveVerdict and ExpiredVerdict:
// the one verdict of replays and turns.
type Verdict struct {
	// Pending (turns): an operator must decide (reason review_required);
	// Outcome is then Denied until they do (nothing runs).
	Pending bool
	Outcome audit.Outcome
	Reason  string
	// StateChanging is whether the verdict lets state-changing tools run.
	StateChanging bool
	// Suggestion says what to do instead, for some denials.
	Suggestion string
}

// Allowed reports whether the verdict lets the block run now.
func (v Verdict) Allowed() bool { return v.Outcome == audit.Allowed && !v.Pending }

// The suggestions of denials.
const (
	// SuggestInteractive is attached to a state-changing procedure denied
	// in the automatic phase.
	SuggestInteractive = "this procedure changes state: offer it in the interactive loop, where a human can approve it (phase \"interactive\")"
	// suggestInteractiveTurn is attached to a turn denied in the automatic
	// phase.
	suggestInteractiveTurn = "this block is not read-only: submit it in the interactive phase, where an operator reviews it"
	// suggestDemoted is attached to an automatic invoke of a demoted
	// procedure.
	suggestDemoted = "this procedure's current version failed its last runs, so it no longer runs unattended: run it in the interactive phase, or use another procedure"
	// suggestRetired is attached to an invoke of a retired procedure.
	suggestRetired = "an admin retired this procedure: it is kept for analysis (GET /v1/procedures/{name} says who and why) but no longer runs; use another procedure"
)

// suggestUnknownTool is the suggestion of a replay denied unknown_tool:
// which tools the catalogue lacks, bounded to fields.MaxSuggestionBytes.
func suggestUnknownTool(tools []string) string {
	s := "neither the catalogue nor the stored procedures have " + strings.Join(tools, ", ") +
		" (a tool its server no longer lists, or one never there): nothing ran; the procedure runs again once they are back"
	return text.Bounded(s, fields.MaxSuggestionBytes-len("…"))
}

// subjects says which blocks a row of the table decides.
type subjects int

const (
	replays subjects = 1 << iota
	turns
	both = replays | turns
)

// row is one row of the decision table: for the blocks of its subjects,
// when holds, then is the verdict.
type row struct {
	of   subjects
	when func(in DecisionInput) bool
	then func(in DecisionInput) Verdict
}

func always(DecisionInput) bool { return true }

func deny(reason, suggestion string) func(DecisionInput) Verdict {
	return func(DecisionInput) Verdict {
		return Verdict{Outcome: audit.Denied, Reason: reason, Suggestion: suggestion}
	}
}

func allow(reason string, stateChanging bool) func(DecisionInput) Verdict {
	return func(DecisionInput) Verdict {
		return Verdict{Outcome: audit.Allowed, Reason: reason, StateChanging: stateChanging}
	}
}

func automatic(in DecisionInput) bool { return in.Phase != audit.PhaseInteractive }

// table is docs/design.md's "Authorization of a replay" and "The turn
// gate" tables, in order: the first row that holds for the block decides.
// It is the one home of both. Argument validation happens before it (a
// failure is a 422 and no decision), so it has no row for that.
var table = []row{
	{replays, func(in DecisionInput) bool { return in.Retired }, deny(audit.ReasonRetired, suggestRetired)},
	{replays, func(in DecisionInput) bool { return !in.Succeeded }, deny(audit.ReasonProcedureNotSucceeded, "")},
	{both, func(in DecisionInput) bool { return in.Problem != "" }, func(in DecisionInput) Verdict {
		return Verdict{Outcome: audit.Denied, Reason: in.Problem}
	}},
	// A call of a tool the catalogue lacks would be refused mid-run: the
	// replay is refused before it starts, in either phase, and says which.
	{replays, func(in DecisionInput) bool { return len(in.UnknownTools) > 0 }, func(in DecisionInput) Verdict {
		return Verdict{Outcome: audit.Denied, Reason: audit.ReasonUnknownTool, Suggestion: suggestUnknownTool(in.UnknownTools)}
	}},
	// A demoted procedure still runs where a human watches.
	{replays, func(in DecisionInput) bool { return in.Demoted && automatic(in) }, deny(audit.ReasonDemoted, suggestDemoted)},
	{both, func(in DecisionInput) bool { return automatic(in) && in.ReadOnly }, allow(audit.ReasonReadOnly, false)},
	// A read-only procedure replays in either phase; new code is always
	// reviewed in the interactive phase, read-only code too.
	{replays, func(in DecisionInput) bool { return in.ReadOnly }, allow(audit.ReasonReadOnly, false)},
	{replays, automatic, deny(audit.ReasonStateChangingAuto, SuggestInteractive)},
	{turns, automatic, deny(audit.ReasonStateChangingAuto, suggestInteractiveTurn)},
	{replays, func(in DecisionInput) bool { return !in.AllowMutating }, deny(audit.ReasonStateChangingDisabled, "")},
	{both, func(in DecisionInput) bool { return in.GrantActive }, allow(audit.ReasonDurableAutoRun, true)},
	{replays, func(in DecisionInput) bool { return in.ReviewedBy != "" && in.ReviewerHasGrantScope }, allow(audit.ReasonOperatorReviewed, true)},
	{turns, func(in DecisionInput) bool { return in.PolicyAutoRun }, allow(audit.ReasonSessionPolicy, true)},
	{turns, always, func(DecisionInput) Verdict {
		return Verdict{Pending: true, Outcome: audit.Denied, Reason: audit.ReasonReviewRequired}
	}},
	{replays, always, deny(audit.ReasonReviewRequired, "")},
}

// Decide applies the decision table to a replay or a new turn. It is pure;
// ResolveVerdict and ExpiredVerdict are a turn's last rows.
func Decide(in DecisionInput) Verdict {
	of := replays
	if in.Turn {
		of = turns
	}
	for _, r := range table {
		if r.of&of != 0 && r.when(in) {
			return r.then(in)
		}
	}
	return Verdict{Outcome: audit.Denied, Reason: audit.ReasonDecisionError} // unreachable: each subject's last row always holds
}

// ResolveVerdict is the turn's verdict once an operator resolved it:
// runs (every choice but reject: the choice's Runs) lets it run,
// state-changing tools included (the operator saw them); else it is denied.
func ResolveVerdict(runs bool) Verdict {
	if runs {
		return Verdict{Outcome: audit.Allowed, Reason: audit.ReasonOperatorApproved, StateChanging: true}
	}
	return Verdict{Outcome: audit.Denied, Reason: audit.ReasonOperatorRejected}
}

// ExpiredVerdict is the verdict on a turn past its deadline.
func ExpiredVerdict() Verdict {
	return Verdict{Outcome: audit.Denied, Reason: audit.ReasonApprovalExpired}
}

// DurableFirst reports whether the decision of v must be stored before
// anything of its run is dispatched: a verdict that lets state-changing
// tools run. Any other allowed run — one that can change no state — has
// its decision stored with its result and its uses after it ran, in one
// commit (procedures.RunRecord), and its answer waits for that commit: a
// run whose record could not be stored answers nothing. A denial is
// stored at once (nothing runs).
func (v Verdict) DurableFirst() bool { return !v.Allowed() || v.StateChanging }
