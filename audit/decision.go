package audit

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/fields"
)

// DecisionKind is what a decision record decided about.
type DecisionKind string

// The decision kinds.
const (
	KindInvoke  DecisionKind = "invoke"
	KindGrant   DecisionKind = "grant"
	KindRevoke  DecisionKind = "revoke"
	KindPromote DecisionKind = "promote"
	// KindCatalogue records a catalogue change: it decides what may run
	// unattended. Its code hash is the new catalogue revision.
	KindCatalogue DecisionKind = "catalogue"
	// KindRetire records an admin retiring a procedure (reason
	// ReasonRetired) or bringing it back (ReasonUnretired).
	KindRetire DecisionKind = "retire"
	// KindStore records an operator loading a whole store offline: an
	// import or merge of a dump (reason ReasonImported, ReasonMerged) or the
	// restore of a backup (ReasonRestored). See StoreDecision.
	KindStore DecisionKind = "store"
	// KindTurn is the one decision on a turn (docs/design.md "The turn
	// gate"): allowed before it runs, or denied.
	KindTurn DecisionKind = "turn"
	// KindApproval is an operator's resolution of a pending turn.
	KindApproval DecisionKind = "approval"
	// KindPolicy is a change of a session policy (set or revoked).
	KindPolicy DecisionKind = "policy"
	// KindDrift is an operator accepting a stale version's drift
	// (ReasonDriftAccepted): the version takes the current contracts as its
	// baseline (procedures.Service.AcceptDrift).
	KindDrift DecisionKind = "drift"
	// KindHealth records a procedure's demotion (ReasonDemoted: its current
	// version failed --demote-after times in a row, for two callers or
	// more; by procgraph itself, ActorProcgraph) or its lifting
	// (ReasonHealthRestored: by procgraph when a verification passed, or by
	// an operator; procedures.Service.LiftDemotion).
	KindHealth DecisionKind = "health"
	// KindRecordings records an operator purging a procedure's recordings
	// (ReasonRecordingsPurged).
	KindRecordings DecisionKind = "recordings"
	// KindToken records a bearer token's creation, rotation, revocation or
	// import into the store (ReasonTokenCreated, …): the holder, scopes
	// and expiry in its note, never the token (package tokens).
	KindToken DecisionKind = "token"
)

// ActorProcgraph is the actor of the decisions procgraph takes itself
// (KindHealth).
const ActorProcgraph = "procgraph"

// DecisionKinds is every decision kind.
var DecisionKinds = []DecisionKind{KindInvoke, KindGrant, KindRevoke, KindPromote, KindCatalogue, KindRetire,
	KindTurn, KindApproval, KindPolicy, KindStore, KindDrift, KindHealth, KindRecordings, KindToken}

// DecisionKindNames returns DecisionKinds as strings (a query parameter's
// allowed values).
func DecisionKindNames() []string {
	out := make([]string, len(DecisionKinds))
	for i, k := range DecisionKinds {
		out[i] = string(k)
	}
	return out
}

// Valid reports whether k is a known kind.
func (k DecisionKind) Valid() bool { return slices.Contains(DecisionKinds, k) }

// Outcome is a decision's result.
type Outcome string

// The outcomes.
const (
	Allowed Outcome = "allowed"
	Denied  Outcome = "denied"
)

// Valid reports whether o is a known outcome.
func (o Outcome) Valid() bool { return o == Allowed || o == Denied }

// Phase is who is watching a replay: nobody (automatic) or a human (interactive).
type Phase string

// The phases.
const (
	PhaseAutomatic   Phase = "automatic"
	PhaseInteractive Phase = "interactive"
)

// Valid reports whether p is a known phase.
func (p Phase) Valid() bool { return p == PhaseAutomatic || p == PhaseInteractive }

// The decision reasons.
const (
	ReasonProcedureNotSucceeded = "procedure_not_succeeded"
	ReasonReadOnly              = "read_only"
	ReasonStateChangingAuto     = "state_changing_in_automatic_phase"
	ReasonStateChangingDisabled = "state_changing_disabled"
	ReasonDurableAutoRun        = "durable_auto_run"
	ReasonOperatorReviewed      = "operator_reviewed"
	ReasonReviewRequired        = "review_required"
	ReasonNotReadOnly           = "not_read_only"
	ReasonGranted               = "granted"
	ReasonRevoked               = "revoked"
	ReasonPromoted              = "promoted"
	ReasonCodeChanged           = "code_changed"
	ReasonNestingTooDeep        = "nesting_too_deep"
	ReasonCycle                 = "cycle"
	ReasonDecisionError         = "decision_error"
	ReasonCatalogueReplaced     = "catalogue_replaced"
	// ReasonCatalogueRefreshed: a catalogue change a refresh made from
	// what an upstream server lists (procedures.Service.RefreshCatalogue).
	ReasonCatalogueRefreshed = "catalogue_refreshed"
	// ReasonUnknownTool: a replay denied because its code calls a tool the
	// catalogue does not have (its server no longer lists it, or it never
	// was there): nothing ran.
	ReasonUnknownTool   = "unknown_tool"
	ReasonDriftAccepted = "drift_accepted"
	// ReasonRetired: a retire decision, or an invoke denied because the
	// procedure is retired.
	ReasonRetired   = "retired"
	ReasonUnretired = "unretired"
	// ReasonCallsRetired: an invoke denied because the procedure calls a
	// retired one (a classification Problem).
	ReasonCallsRetired = "calls_retired_procedure"
	// ReasonDemoted: a health decision demoting a procedure, or an
	// automatic invoke denied because the procedure is demoted.
	ReasonDemoted = "demoted"
	// ReasonHealthRestored: a health decision lifting a demotion (a
	// verification that passed, by procgraph, or an operator).
	ReasonHealthRestored = "health_restored"
	// ReasonRecordingsPurged: a recordings decision.
	ReasonRecordingsPurged = "recordings_purged"

	// The reasons of the turn gate.
	ReasonSessionPolicy    = "session_policy"
	ReasonOperatorApproved = "operator_approved"
	ReasonOperatorRejected = "operator_rejected"
	ReasonApprovalExpired  = "approval_expired"
	// ReasonPolicySet and ReasonPolicyRevoked are the reasons of policy
	// decisions.
	ReasonPolicySet     = "policy_set"
	ReasonPolicyRevoked = "policy_revoked"
	// ReasonTurnCancelled is the reason of the decision on a turn its
	// requester cancelled.
	ReasonTurnCancelled = "turn_cancelled"
	// ReasonReviewAtCall is the reason of the decision that runs a turn
	// reviewed at the call under the read-only allow-set, up to its first
	// state-changing call.
	ReasonReviewAtCall = "review_at_call"
	// ReasonDiverged is the reason of the denial of a resumed turn that
	// did not reach the approved call as it paused (nothing dispatched).
	ReasonDiverged = "diverged"
	// ReasonRunLost is the reason of the ending of a turn claimed running
	// whose run can no longer be in progress (gate.TurnRecord.RunLost): its
	// instance died or lost the store; a call it dispatched is never sent
	// again.
	ReasonRunLost = "run_lost"

	// The reasons of a KindStore record.
	ReasonImported = "imported"
	ReasonMerged   = "merged"
	ReasonRestored = "restored"
	// ReasonAuthorizationsTrusted is the reason of the second record of an
	// import or merge that kept the dump's session policies and durable
	// grants (--trust-authorizations).
	ReasonAuthorizationsTrusted = "authorizations_trusted"

	// The reasons of a KindToken record.
	ReasonTokenCreated  = "token_created"
	ReasonTokenRotated  = "token_rotated"
	ReasonTokenRevoked  = "token_revoked"
	ReasonTokenImported = "token_imported"

	// ReasonSignatureMismatch is the conflict reason of a capture under a
	// name that a procedure of another signature holds.
	ReasonSignatureMismatch = "signature_mismatch"
	// ReasonCatalogueChanged is the conflict reason of a capture prepared
	// under a catalogue that is no longer the stored one
	// (procedures.CaptureInput.Catalogue): nothing was written.
	ReasonCatalogueChanged = "catalogue_changed"
)

// Decision is one audit record: who decided what about which code, and why.
// It never holds argument values, code, tokens or results.
type Decision struct {
	ID           string       `json:"id"`
	Kind         DecisionKind `json:"kind"`
	Procedure    string       `json:"procedure"`
	CodeHash     string       `json:"code_hash"`
	Phase        Phase        `json:"phase"`
	Outcome      Outcome      `json:"outcome"`
	Reason       string       `json:"reason"`
	Actor        string       `json:"actor"`
	AllowedTools []string     `json:"allowed_tools"`
	At           time.Time    `json:"at"`
	// Session is the agent session the decision is about: the session of
	// a policy set or revoked (kind policy); empty for a decision about no
	// session.
	Session string `json:"session,omitempty"`
	// Note is an operator's free-text reason for a grant, revoke or promote.
	Note string `json:"note,omitempty"`
	// Suggestion says what to do instead of a denied call, when there is something.
	Suggestion string `json:"suggestion,omitempty"`
	// Result is what happened to the run an allowed invoke or turn
	// decided (health.RunResults: succeeded, or the class it failed under), set
	// once the run ended (procedures.Recorder.SetResult); empty while it runs, for a
	// run that never ended, and for every other decision.
	Result string `json:"result,omitempty"`
}

// lastIDNanos makes decision ids strictly increasing within a process, so
// records made in the same millisecond still list in the order they were made.
var lastIDNanos atomic.Int64

// NewDecisionID returns a fresh decision id, "pgd_" followed by a
// time-ordered, random-suffixed hex string: ids sort by creation time, and
// strictly so within one process.
func NewDecisionID(at time.Time) string {
	n := at.UnixNano()
	for {
		last := lastIDNanos.Load()
		if n <= last {
			n = last + 1
		}
		if lastIDNanos.CompareAndSwap(last, n) {
			break
		}
	}
	var r [8]byte
	if _, err := rand.Read(r[:]); err != nil {
		panic(fmt.Sprintf("procedures: crypto/rand failed: %v", err))
	}
	return fmt.Sprintf("pgd_%016x%s", uint64(n), hex.EncodeToString(r[:]))
}

// The audit log's page sizes (fields.DecisionLimit): a store answers
// DefaultDecisionLimit records for Limit 0 and at most MaxDecisionLimit.
const (
	DefaultDecisionLimit = fields.DefaultDecisionLimit
	MaxDecisionLimit     = fields.MaxDecisionLimit
)

// DecisionFilter selects audit records. Empty fields match everything.
// Every store answers a filtered page from an index (procedure, actor, kind,
// kind and outcome, outcome; the time range from the records' time order),
// so a page costs about the same whatever the log's size.
type DecisionFilter struct {
	Procedure string
	Kind      DecisionKind
	Actor     string
	Outcome   Outcome
	// Since (inclusive) and Until (exclusive) bound the records' time; zero
	// leaves that side open. Stores keep times at millisecond precision:
	// procedures.Service.Decisions truncates both to it.
	Since, Until time.Time
	Limit        int // 0: DefaultDecisionLimit; at most MaxDecisionLimit
	// Before, a decision id, pages back: only records older than it (in the
	// list's order: time, then id) are returned.
	Before string
}

// Match reports whether d passes f's filters (not Before or Limit): the
// one statement of what each filter means, which a store applies to the
// records its index walk did not already select by.
func (f DecisionFilter) Match(d Decision) bool {
	switch {
	case f.Procedure != "" && d.Procedure != f.Procedure,
		f.Kind != "" && d.Kind != f.Kind,
		f.Actor != "" && d.Actor != f.Actor,
		f.Outcome != "" && d.Outcome != f.Outcome,
		!f.Since.IsZero() && d.At.Before(f.Since),
		!f.Until.IsZero() && !d.At.Before(f.Until):
		return false
	}
	return true
}

// DecisionOf returns the decision err carries (see WithDecision), if any.
func DecisionOf(err error) (Decision, bool) {
	var e *fault.Error
	if !errors.As(err, &e) {
		return Decision{}, false
	}
	d, ok := e.Details[fault.DetailDecision].(Decision)
	return d, ok
}

// StoreDecision is the audit record of an operator loading a whole store
// offline (kind KindStore; reason ReasonImported, ReasonMerged or
// ReasonRestored), by actor, with note saying what was loaded. Like every
// record it names no value and no code: the note holds counts, the dump's
// checksum and format, or a size (ImportNote, RestoreNote).
func StoreDecision(reason, actor, note string) Decision {
	return Decision{Kind: KindStore, Outcome: Allowed, Reason: reason, Actor: actor, Note: note}
}

// RestoreNote is the note of a restore's audit record.
func RestoreNote(bytes int64) string {
	return fmt.Sprintf("store file restored from a backup of %d bytes", bytes)
}
