package gate

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/binding"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
)

// The reasons of a busy refusal of a new approval.
const (
	// ReasonPendingApprovals is the reason of a busy refusal: the pending
	// approvals are at their bound.
	ReasonPendingApprovals = "pending_approvals"
	// ReasonPendingRequester is the reason of a busy refusal: the
	// requester's own pending approvals are at their bound
	// (PendingBounds.PerRequester).
	ReasonPendingRequester = "pending_approvals_requester"
)

// TurnStatus is where a turn is in its life.
type TurnStatus string

// The turn statuses (docs/api.md "Turn").
const (
	TurnPending   TurnStatus = "pending"
	TurnApproved  TurnStatus = "approved"
	TurnRejected  TurnStatus = "rejected"
	TurnExpired   TurnStatus = "expired"
	TurnCancelled TurnStatus = "cancelled"
	TurnRunning   TurnStatus = "running"
	TurnSucceeded TurnStatus = "succeeded"
	TurnFailed    TurnStatus = "failed"
	TurnDenied    TurnStatus = "denied"
)

// TurnStatuses is every turn status.
var TurnStatuses = []TurnStatus{TurnPending, TurnApproved, TurnRejected, TurnExpired, TurnCancelled,
	TurnRunning, TurnSucceeded, TurnFailed, TurnDenied}

// Valid reports whether s is a known status.
func (s TurnStatus) Valid() bool { return slices.Contains(TurnStatuses, s) }

// Done reports whether a turn in status s is over: it will never run (again),
// and its code and argument values leave the store.
func (s TurnStatus) Done() bool {
	switch s {
	case TurnPending, TurnApproved, TurnRunning:
		return false
	}
	return true
}

// Choice is an operator's answer to an approval.
type Choice string

// The choices (docs/design.md "The turn gate").
const (
	ChoiceRunOnce   Choice = "run_once"
	ChoiceAutoRun   Choice = "auto_run"
	ChoiceAlwaysAsk Choice = "always_ask"
	ChoiceReject    Choice = "reject"
	// ChoiceRunAll answers a turn paused at a call (ReviewAtCall): run
	// this call and every later state-changing call of the run.
	ChoiceRunAll Choice = "run_all"
)

// Choices is every choice.
var Choices = []Choice{ChoiceRunOnce, ChoiceAutoRun, ChoiceAlwaysAsk, ChoiceReject, ChoiceRunAll}

// BlockChoices are the choices of a turn reviewed as a whole block
// (ReviewBlock): every choice but ChoiceRunAll.
var BlockChoices = []Choice{ChoiceRunOnce, ChoiceAutoRun, ChoiceAlwaysAsk, ChoiceReject}

// Review is how a turn that needs an operator is reviewed (docs/design.md
// "The turn gate"): ReviewBlock, the whole block before it runs;
// ReviewAtCall, each state-changing call as the run reaches it, with the
// arguments the program evaluated, after its reads ran.
type Review string

// The reviews.
const (
	ReviewBlock  Review = "block"
	ReviewAtCall Review = "at_call"
)

// Reviews is every review.
var Reviews = []Review{ReviewBlock, ReviewAtCall}

// Valid reports whether r is a known review.
func (r Review) Valid() bool { return slices.Contains(Reviews, r) }

// Of is r as a turn shows it: ReviewBlock for "" (a turn stored before
// reviews).
func (r Review) Of() Review {
	if r == "" {
		return ReviewBlock
	}
	return r
}

// TurnCall is the call a turn reviewed at the call is paused at
// (docs/api.md "Turn"): what an answer binds to, with no value — its
// position in the run's calls (from 0), the line it is on as the run
// reported it (0: unknown; shown, never trusted), the tool, the tool's
// schema hash and the canonical digest of its arguments
// (jsonvalue.Digest).
type TurnCall struct {
	Position   int    `json:"position"`
	Line       int    `json:"line"`
	Tool       string `json:"tool"`
	SchemaHash string `json:"schema_hash"`
	ArgsDigest string `json:"args_digest"`
}

// CallOf is the TurnCall of pause p (nil for nil).
func CallOf(p *replay.Pause) *TurnCall {
	if p == nil {
		return nil
	}
	return &TurnCall{Position: p.Position, Line: p.Line, Tool: p.Tool, SchemaHash: p.SchemaHash, ArgsDigest: p.ArgsDigest}
}

// Valid reports whether c is a known choice.
func (c Choice) Valid() bool { return slices.Contains(Choices, c) }

// Runs reports whether an approval resolved with c lets the turn run.
func (c Choice) Runs() bool { return c.Valid() && c != ChoiceReject }

// Resolution is how an operator resolved an approval.
type Resolution struct {
	Choice Choice    `json:"choice"`
	By     string    `json:"by"`
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
	// CodeHash is the hash of the code that runs: the replacement's when the
	// operator edited the block.
	CodeHash string `json:"code_hash"`
	// Call is the call the answer was given at (a turn paused at a call;
	// nil otherwise, and for an edited block, which runs as a whole).
	Call *TurnCall `json:"call,omitempty"`
}

// Turn is one block an agent asked to run (docs/api.md "Turn"). It holds no code
// and no argument values.
type Turn struct {
	ID                 string      `json:"id"`
	SessionID          string      `json:"session_id"`
	Phase              audit.Phase `json:"phase"`
	CodeHash           string      `json:"code_hash"`
	Signature          []string    `json:"signature"`
	ReadOnly           bool        `json:"read_only"`
	StateChangingTools []string    `json:"state_changing_tools"`
	UnknownTools       []string    `json:"unknown_tools"`
	Opaque             bool        `json:"opaque"`
	Summary            string      `json:"summary"`
	Status             TurnStatus  `json:"status"`
	RequestedBy        string      `json:"requested_by"`
	RequestedAt        time.Time   `json:"requested_at"`
	Deadline           time.Time   `json:"deadline"`
	Resolution         *Resolution `json:"resolution"`
	// Review is how the turn is reviewed (ReviewBlock for a turn stored
	// before reviews: Review.Of).
	Review Review `json:"review"`
	// Call is the call a turn reviewed at the call is paused at (status
	// pending), approved at (approved, running) or last stopped at (done);
	// nil for a turn that never paused.
	Call *TurnCall `json:"call,omitempty"`
	// Pauses is how many of its pauses were answered with a call that
	// ran (the calls approved so far; a run_all covers the rest of the
	// run with its one). The stores compare it in every transition
	// (CheckTransition): a claim made on a turn read at an earlier pause
	// is refused.
	Pauses int `json:"pauses"`
}

// TurnCapture is a turn's request to be captured once it succeeded.
type TurnCapture struct {
	Cause    *procedures.CauseInput `json:"cause,omitempty"`
	Summary  string                 `json:"summary,omitempty"`
	Metadata map[string]any         `json:"metadata,omitempty"`
	// NoLift keeps the captured code as written ("lift": false); the turn
	// itself always runs the code as reviewed.
	NoLift bool `json:"no_lift,omitempty"`
}

// TurnRecord is a turn as the store keeps it while an operator may review
// it: the Turn, its code and argument values (until it is done), and what
// to capture on success.
type TurnRecord struct {
	Turn
	Code      string         `json:"code"`
	Dialect   string         `json:"dialect"`
	Arguments map[string]any `json:"arguments"`
	Capture   *TurnCapture   `json:"capture,omitempty"`
	// Denial is the turn's decision when it was denied after it was stored
	// (rejected, expired, cancelled): the audit record, id included, which
	// the requester's denied answer carries. It holds no values (CheckAudit).
	Denial *audit.Decision `json:"denial,omitempty"`
	// Binding is what was submitted (pending) and then what the operator
	// approved (approved): an approved turn runs only while the block,
	// classified again, still has it (Binding.Check). Nil runs nothing.
	Binding *binding.Binding `json:"binding,omitempty"`
	// Pause is where a turn reviewed at the call stopped (replay.Pause:
	// the call with its arguments, the calls before it with their
	// answers), while it is pending or approved at it; it holds argument
	// values and tool output, and leaves the store with the code.
	Pause *replay.Pause `json:"pause,omitempty"`
}

// Purged returns r as it is stored: a turn that is done keeps neither code
// nor argument values (docs/design.md: they leave the store once the turn is
// done). Stores call it on every write.
func (r TurnRecord) Purged() TurnRecord {
	if r.Status.Done() {
		r.Code, r.Arguments, r.Capture, r.Pause = "", nil, nil, nil
	}
	return r
}

// PurgedAt is Purged for a write at now, which also empties a turn claimed
// running whose deadline has passed: its run was claimed before the
// deadline and holds its code in memory, so whether it still runs or its
// instance died mid-run, the store needs neither code nor argument values
// any longer (the turn stays running until its run ends, or until RunLost
// says no run can still end it). Stores call it on every transition.
func (r TurnRecord) PurgedAt(now time.Time) TurnRecord {
	if r.Status == TurnRunning && !r.Live(now) {
		r.Code, r.Arguments, r.Capture, r.Pause = "", nil, nil, nil
	}
	return r.Purged()
}

// RunLost reports whether r is a turn claimed running whose run can no
// longer be in progress at now: a run is claimed before the turn's deadline
// and lasts at most maxRun after its claim (the run timeout, the sandbox's
// grace to stop it and the write that marks it done), so past deadline +
// maxRun the instance that claimed it died or lost the store, and the turn
// will never be marked done by it. It is the one home of that rule: the
// turn gate ends such a turn as failed (compare-and-set on running, so a
// run that does finish and the ending cannot both be stored).
func (r *TurnRecord) RunLost(now time.Time, maxRun time.Duration) bool {
	return r.Status == TurnRunning && now.After(r.Deadline.Add(maxRun))
}

// HoldsValues reports whether r still holds code, argument values or a
// capture request.
func (r *TurnRecord) HoldsValues() bool {
	return r.Code != "" || r.Arguments != nil || r.Capture != nil || r.Pause != nil
}

// Live reports whether the turn's deadline is still ahead at now.
func (r *TurnRecord) Live(now time.Time) bool { return now.Before(r.Deadline) }

// SessionPolicy is an operator's standing answer for one session and one
// code hash (whitespace-normalised, as Bamboo's). It is bound to the
// requester of the turn whose approval set it: a session belongs to its
// requester (AppliesTo).
type SessionPolicy struct {
	SessionID string    `json:"-"`
	CodeHash  string    `json:"code_hash"`
	Policy    Choice    `json:"policy"` // ChoiceAutoRun or ChoiceAlwaysAsk
	Summary   string    `json:"summary"`
	SetBy     string    `json:"set_by"`
	SetAt     time.Time `json:"set_at"`
	// RequestedBy is the requester (token subject) of the turn whose
	// approval set the policy; "" for a policy stored or dumped before
	// policies were bound, which applies to nobody.
	RequestedBy string `json:"requested_by"`
	// Binding is what the operator approved; nil for a policy stored before
	// bindings or imported unbound, which applies to no one
	// (InactiveUnbound).
	Binding *binding.Binding `json:"binding,omitempty"`
}

// AppliesTo reports whether p decides the turns of requester: only those of
// the requester it was set for. A turn another requester submits under the
// same session id is decided as if there were no policy (reviewed), and a
// policy bound to nobody applies to no one (fail closed). It is the one
// home of that rule.
func (p SessionPolicy) AppliesTo(requester string) bool {
	return p.RequestedBy != "" && p.RequestedBy == requester
}

// ApprovalFilter selects approvals for ListApprovals. Empty fields match
// everything.
type ApprovalFilter struct {
	Status    TurnStatus
	SessionID string
	Limit     int // default 50, max 500
	// Before, a turn id, pages back: only turns created before it.
	Before string
}

// Approval list bounds.
const (
	DefaultApprovalLimit = 50
	MaxApprovalLimit     = 500
)

// turnIDShape is a canonical turn id (NewTurnID).
var turnIDShape = regexp.MustCompile(`^trn_[0-9a-f]{32}$`)

// ValidTurnID reports whether id is a canonical turn id. Anything else (a
// stale format, other case, padding) names no turn.
func ValidTurnID(id string) bool { return turnIDShape.MatchString(id) }

// NewTurnID returns a fresh turn id, "trn_" and a time-ordered,
// random-suffixed hex string (as NewDecisionID).
func NewTurnID(at time.Time) string {
	var r [8]byte
	if _, err := rand.Read(r[:]); err != nil {
		panic(fmt.Sprintf("procedures: crypto/rand failed: %v", err))
	}
	return fmt.Sprintf("trn_%016x%s", uint64(at.UnixNano()), hex.EncodeToString(r[:]))
}

// The turn gate's defaults (docs/api.md "Serve settings"), which an import
// applies to the approvals it admits unless told the target's settings.
const (
	DefaultMaxPendingApprovals = 32
	// DefaultMaxPendingPerRequester is Options.MaxPendingPerRequester's
	// default (never above MaxPending).
	DefaultMaxPendingPerRequester = 8
	DefaultApprovalTimeout        = 330 * time.Second
)

// PendingBounds are the bounds on pending approvals that CreateApproval
// checks atomically with the write (docs/design.md "Bounded admission").
type PendingBounds struct {
	// Total is how many turns may be pending at once, of every requester.
	Total int
	// PerRequester is how many of them one requester (TurnRecord.RequestedBy,
	// the token holder) may hold, so that one token cannot fill Total and
	// starve every other agent; 0 means no bound of its own (Total).
	PerRequester int
}

// OrDefaults is b with its defaults applied, the one home of them: Total
// DefaultMaxPendingApprovals when not positive, PerRequester
// DefaultMaxPendingPerRequester when not positive, and never above Total.
func (b PendingBounds) OrDefaults() PendingBounds {
	if b.Total <= 0 {
		b.Total = DefaultMaxPendingApprovals
	}
	if b.PerRequester <= 0 {
		b.PerRequester = DefaultMaxPendingPerRequester
	}
	b.PerRequester = min(b.PerRequester, b.Total)
	return b
}

// PendingCount is what a store counted, in the transaction that creates
// an approval, among the turns pending with a deadline after now: all of
// them and the new turn's requester's, each with the time until the
// earliest of their deadlines.
type PendingCount struct {
	Total, Requester         int
	TotalNext, RequesterNext time.Duration
}

// Admit is CreateApproval's admission rule, the one home of it for both
// stores: nil when a new approval fits b after c, else the fault.CodeBusy
// refusal — the requester's own bound first (ReasonPendingRequester) when
// it is below the total, then the total (ReasonPendingApprovals) — with
// Retry-After the time until the earliest pending deadline that would free
// a place.
func (b PendingBounds) Admit(c PendingCount) error {
	if b.PerRequester > 0 && b.PerRequester < b.Total && c.Requester >= b.PerRequester {
		return busyPending(ReasonPendingRequester, b.PerRequester, c.RequesterNext,
			"%d approvals of this requester are already pending: nothing was recorded")
	}
	if c.Total >= b.Total {
		return busyPending(ReasonPendingApprovals, b.Total, c.TotalNext, "%d approvals are already pending: nothing was recorded")
	}
	return nil
}

// busyPending is the fault.CodeBusy refusal of a new approval beyond the bound
// named by reason.
func busyPending(reason string, max int, retryAfter time.Duration, format string) *fault.Error {
	secs := int((retryAfter + time.Second - 1) / time.Second) // rounded up: a place is free after it
	if secs < 1 {
		secs = 1
	}
	return fault.Errorf(fault.CodeBusy, format, max).
		WithDetails("reason", reason).WithDetails("limit", max).
		WithDetails(fault.DetailRetryAfter, secs)
}
