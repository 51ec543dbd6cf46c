package dump

import (
	"context"
	"slices"
	"time"

	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/internal/jsonvalue"
	"github.com/procgraph/procgraph/procedures"
)

// admission is the one home of docs/design.md "A dump is data, not authority"
// for what a record may carry into the target once the dump is valid:
//   - a turn arrives pending only while its deadline, moved no later than
//     the import's time + the approval timeout, is ahead and the pending
//     bounds (PendingBounds.Admit, the target's pending ones counted) have
//     room; a pending one past its deadline or past a bound, or paused at
//     a call (its pause holds answers the target's tools never gave),
//     arrives expired; an approved one
//     (never run) arrives expired and a running one failed, so no turn
//     arrives runnable; a pending one's classification (what an operator
//     reviews) is recomputed against the catalogue the import keeps, its
//     nested procedures unknown (not read-only) until its resolution
//     analyses it again; every turn that is done arrives purged of code and
//     argument values;
//   - unless trusted, a session policy and a durable grant arrive without
//     their Binding, so Binding.Check finds them unbound (InactiveUnbound)
//     and they authorise nothing until an operator on the target approves
//     or grants again. Trusted, they keep the dumped binding, which is
//     checked against the target's state at every decision like any other.
//     (A pending turn's binding is replaced when it is resolved; no other
//     turn arrives runnable.)
//   - a recording arrives with the target's bound (Record.Keep): its
//     version keeps the newest.
type admission struct {
	now     time.Time
	timeout time.Duration
	bounds  gate.PendingBounds
	// pending and per count the live pending turns the target holds or
	// this import admitted, all and by requester.
	pending int
	per     map[string]int
	trust   bool
	cat     *procedures.Catalogue
	// keep is the recordings a version keeps (ImportOptions.RecordingsPerVersion).
	keep int
}

// newAdmission counts the target's live pending turns.
func newAdmission(ctx context.Context, s Target, opts ImportOptions) (*admission, error) {
	a := &admission{now: time.Now(), timeout: opts.ApprovalTimeout, bounds: opts.Pending, per: map[string]int{}, trust: opts.TrustAuthorizations,
		keep: opts.RecordingsPerVersion}
	if opts.Now != nil {
		a.now = opts.Now()
	}
	if a.timeout <= 0 {
		a.timeout = gate.DefaultApprovalTimeout
	}
	a.bounds = a.bounds.OrDefaults()
	cat, err := s.Catalogue(ctx)
	if err != nil {
		return nil, err
	}
	if len(cat.Tools) > 0 {
		a.cat = cat // a merge keeps the target's; an import's target has none
	}
	ts, ok := s.(gate.TurnStore)
	if !ok {
		return a, nil
	}
	f := gate.ApprovalFilter{Status: gate.TurnPending, Limit: gate.MaxApprovalLimit}
	for {
		page, err := ts.ListApprovals(ctx, f)
		if err != nil {
			return nil, err
		}
		for _, r := range page {
			if r.Live(a.now) {
				a.pending++
				a.per[r.RequestedBy]++
			}
		}
		if len(page) < f.Limit {
			return a, nil
		}
		f.Before = page[len(page)-1].ID
	}
}

// admit returns r as the target may hold it.
func (a *admission) admit(r Record) Record {
	switch r.Type {
	case TypeCatalogue:
		if a.cat == nil {
			a.cat = r.Catalogue
		}
	case TypeProcedure:
		if p := r.Procedure; p.Grant != nil && p.Grant.Binding != nil && !a.trust {
			c, g := *p, *p.Grant
			g.Binding = nil
			c.Grant = &g
			r.Procedure = &c
		}
	case TypeApproval:
		t := *r.Approval
		switch t.Status {
		case gate.TurnPending:
			if lim := a.now.Add(a.timeout); t.Deadline.After(lim) {
				t.Deadline = lim
			}
			// A turn paused at a call arrives expired: its pause holds
			// answers the target never got from its tools.
			if t.Pause != nil || t.Call != nil {
				t.Status = gate.TurnExpired
				break
			}
			if !t.Live(a.now) || a.bounds.Admit(gate.PendingCount{Total: a.pending, Requester: a.per[t.RequestedBy]}) != nil {
				t.Status = gate.TurnExpired
				break
			}
			a.pending++
			a.per[t.RequestedBy]++
			c := procedures.Classify(t.Signature, a.cat, nil)
			t.ReadOnly = c.ReadOnly && c.Problem == ""
			if !slices.Equal(t.StateChangingTools, c.StateChangingTools) {
				t.StateChangingTools = jsonvalue.List(c.StateChangingTools)
			}
			if !slices.Equal(t.UnknownTools, c.UnknownTools) {
				t.UnknownTools = jsonvalue.List(c.UnknownTools)
			}
		case gate.TurnApproved:
			t.Status = gate.TurnExpired
		case gate.TurnRunning:
			t.Status = gate.TurnFailed
		}
		t = t.Purged()
		r.Approval = &t
	case TypeRecording:
		r.Keep = a.keep
	case TypePolicy:
		if !a.trust {
			c := *r.Policy
			c.Binding = nil
			r.Policy = &c
		}
	}
	return r
}
