package gate

import (
	"context"
	"slices"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/usage"
)

// TurnStore keeps the turn gate's shared state: the turns an operator may
// review (approvals) and the session policies. Both stores implement it
// and pass graph/storetest; every method is atomic, and may also return
// fault.CodeUnavailable and fault.CodeInternal.
type TurnStore interface {
	// CreateApproval stores r (status pending) if bounds admit it
	// (PendingBounds.Admit) after the turns pending with a deadline after
	// now — all of them, and those of r.RequestedBy — counted atomically
	// with the write, in the same transaction or statement: concurrent
	// creators never exceed either bound. The stored record is
	// r.Purged(). Returns fault.CodeBusy (ReasonPendingRequester or
	// ReasonPendingApprovals) at a bound, with nothing written;
	// fault.CodeConflict when the id exists; fault.CodeInvalid when CheckApproval
	// refuses r.
	CreateApproval(ctx context.Context, r TurnRecord, bounds PendingBounds, now time.Time) error

	// GetApproval returns the stored turn. Returns fault.CodeNotFound.
	GetApproval(ctx context.Context, id string) (*TurnRecord, error)

	// ListApprovals returns the turns matching f, newest first. Returns
	// fault.CodeInvalid for a negative limit or an unknown status.
	ListApprovals(ctx context.Context, f ApprovalFilter) ([]*TurnRecord, error)

	// TransitionTurn replaces the stored turn next.ID by next.PurgedAt(now) —
	// and appends the decisions ds in the same transaction — only if its
	// stored status is one of from and, when live is set, now is before its
	// stored deadline. This compare-and-set is what makes a resolution
	// happen at most once and a run start at most once, across instances.
	// It also compares the turn's pauses (CheckPause): a transition built
	// from a turn read at an earlier pause of a review at the call is
	// refused, so that a resume is claimed once per pause.
	// Returns fault.CodeNotFound; fault.CodeConflict with details "reason" ("status",
	// and "status" the stored one; or ReasonApprovalExpired) when the
	// condition fails, with nothing written.
	TransitionTurn(ctx context.Context, next TurnRecord, from []TurnStatus, live bool, now time.Time, ds ...audit.Decision) (*TurnRecord, error)

	// FinishTurn marks the turn next.ID done — next.PurgedAt(now), only
	// if its stored status is running and CheckPause holds
	// (TransitionTurn's compare-and-set, not live; done reports it) — and commits rr, what its run left
	// (procedures.Store.RecordRun), in one transaction, whether the turn
	// was still running or not (ended as lost meanwhile: the run happened
	// all the same). It returns the turn as stored and rr's use results;
	// on an error, RecordRun's or fault.CodeNotFound, nothing is written.
	FinishTurn(ctx context.Context, next TurnRecord, now time.Time, rr procedures.RunRecord) (_ *TurnRecord, done bool, _ []procedures.UseResult, _ error)

	// PutPolicy stores p (replacing the session's policy for its code
	// hash) and appends d, in one transaction.
	PutPolicy(ctx context.Context, p SessionPolicy, d audit.Decision) error

	// Policy returns the session's policy for codeHash; ok is false when
	// there is none.
	Policy(ctx context.Context, sessionID, codeHash string) (p SessionPolicy, ok bool, err error)

	// Policies returns the session's policies, by code hash.
	Policies(ctx context.Context, sessionID string) ([]SessionPolicy, error)

	// DeletePolicies deletes the session's policies whose code hash starts
	// with prefix ("" for all of them) and appends the audit records that
	// records returns for their code hashes (by code hash), in one
	// transaction, returning how many it deleted. With a prefix exactly
	// one policy must match: none or several is fault.CodeConflict (details
	// "reason" no_match or ambiguous, "matches") and nothing is written;
	// an error of records is returned as it is, with nothing written.
	DeletePolicies(ctx context.Context, sessionID, prefix string, records PolicyRecords) (int, error)
}

// PolicyRecords returns the audit records of deleting the policies of
// codeHashes, found in the deleting transaction (it may be called again
// when the transaction is retried).
type PolicyRecords func(codeHashes []string) ([]audit.Decision, error)

// CheckApproval is CreateApproval's rule on a record, the one home of it
// for both stores: an approval needs an id and a session id CheckSessionID
// accepts (fault.CodeInvalid).
func CheckApproval(r TurnRecord) error {
	if r.ID == "" {
		return fault.Errorf(fault.CodeInvalid, "an approval needs an id")
	}
	return usage.CheckSessionID(r.SessionID)
}

// CheckTransition is TransitionTurn's condition, the one home of it for both
// stores: cur's status is one of from and, when live, now is before its
// deadline.
func CheckTransition(cur *TurnRecord, from []TurnStatus, live bool, now time.Time) error {
	if !slices.Contains(from, cur.Status) {
		return fault.Errorf(fault.CodeConflict, "turn %s is %s", cur.ID, cur.Status).
			WithDetails("reason", "status").WithDetails("status", string(cur.Status))
	}
	if live && !cur.Live(now) {
		return fault.Errorf(fault.CodeConflict, "turn %s is past its deadline", cur.ID).
			WithDetails("reason", audit.ReasonApprovalExpired).WithDetails("status", string(cur.Status))
	}
	return nil
}

// ReasonPause is the conflict reason of a transition built from a turn
// read at another pause than the stored one (CheckPause).
const ReasonPause = "pause"

// CheckPause is the second condition of TransitionTurn and FinishTurn,
// the one home of it for both stores: next, built from a read of the
// turn, is at the stored turn cur's pause — the same Pauses — or is the
// next pause of cur's run (cur running, next pending, one more). A claim
// of a turn read approved at pause n therefore fails once the turn is
// approved again at pause n+1 (the status alone would match), and a
// resume is claimed at most once per pause, across instances
// (fault.CodeConflict, reason ReasonPause, nothing written).
func CheckPause(cur *TurnRecord, next TurnRecord) error {
	if next.Pauses == cur.Pauses || cur.Status == TurnRunning && next.Status == TurnPending && next.Pauses == cur.Pauses+1 {
		return nil
	}
	return fault.Errorf(fault.CodeConflict, "turn %s is at pause %d, not %d", cur.ID, cur.Pauses, next.Pauses).
		WithDetails("reason", ReasonPause).WithDetails("status", string(cur.Status))
}

// CheckPolicyMatches is DeletePolicies' rule on a prefix, for both stores:
// a prefix must match exactly one policy ("" matches any number).
func CheckPolicyMatches(prefix string, matches int) error {
	switch {
	case prefix == "":
		return nil
	case matches == 0:
		return fault.Errorf(fault.CodeConflict, "no policy of this session has a code hash starting with %s", prefix).
			WithDetails("reason", "no_match").WithDetails("matches", 0)
	case matches > 1:
		return fault.Errorf(fault.CodeConflict, "%d policies of this session have a code hash starting with %s: give more of it", matches, prefix).
			WithDetails("reason", "ambiguous").WithDetails("matches", matches)
	}
	return nil
}
