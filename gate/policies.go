package gate

import (
	"context"
	"strings"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/binding"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/usage"
)

// SetPolicy stores a session's policy for one code hash, audited with one
// decision of kind policy (reason policy_set; who, the session and the
// code hash; the choice and the operator's reason in its note). The next
// turn of the session on this instance reads its policies again.
func (g *Gate) SetPolicy(ctx context.Context, p SessionPolicy, reason string) (audit.Decision, error) {
	defer g.policies.forget(p.SessionID)
	p.SetAt = g.svc.Now()
	d := audit.Decision{Kind: audit.KindPolicy, CodeHash: p.CodeHash, Session: p.SessionID, Outcome: audit.Allowed,
		Reason: audit.ReasonPolicySet, Actor: p.SetBy, Note: strings.TrimSpace(string(p.Policy) + ": " + reason), At: p.SetAt}
	return g.svc.Recorder().RecordWith(d, func(d audit.Decision) error { return g.turns.PutPolicy(ctx, p, d) })
}

// RevokePolicies deletes a session's policies whose code hash starts with
// prefix ("" for all), audited in the same transaction with one decision
// of kind policy (reason policy_revoked) per revoked policy, each naming
// who, the session and the policy's code hash — or, when revoking all
// found none, one record without a code hash, so that the attempt is
// audited too. It returns how many it revoked and the records. A prefix
// must be at least 8 hex characters and match exactly one policy
// (fault.CodeInvalid, fault.CodeConflict); the session id must pass
// usage.CheckSessionID (fault.CodeInvalid). The next turn of the
// session on this instance reads its policies again: a revoked policy
// stops applying here at once.
func (g *Gate) RevokePolicies(ctx context.Context, sessionID, prefix, actor string) (int, []audit.Decision, error) {
	if err := usage.CheckSessionID(sessionID); err != nil {
		return 0, nil, err
	}
	defer g.policies.forget(sessionID)
	if prefix != "" && (len(prefix) < 8 || len(prefix) > 64 || strings.Trim(prefix, "0123456789abcdef") != "") {
		return 0, nil, fault.Errorf(fault.CodeInvalid, "a policy prefix is 8 to 64 lowercase hex characters of a code hash").WithDetails("field", "prefix")
	}
	base := audit.Decision{Kind: audit.KindPolicy, Session: sessionID, Outcome: audit.Allowed, Reason: audit.ReasonPolicyRevoked, Actor: actor}
	n := 0
	recs, err := g.svc.Recorder().RecordMany(func(build func([]audit.Decision) ([]audit.Decision, error)) error {
		var err error
		n, err = g.turns.DeletePolicies(ctx, sessionID, prefix, func(hashes []string) ([]audit.Decision, error) {
			ds := []audit.Decision{base}
			if len(hashes) > 0 {
				ds = make([]audit.Decision, len(hashes))
				for i, h := range hashes {
					ds[i] = base
					ds[i].CodeHash = h
				}
			}
			return build(ds)
		})
		return err
	})
	return n, recs, err
}

// PolicyState is a session policy as GET /v1/sessions/{id}/policies shows
// it: the stored policy and why it does not apply now (nil when it does).
type PolicyState struct {
	SessionPolicy
	// InactiveReason is Binding.Check's reason against the policy's code
	// as it is classified now (its program is fixed by its hashes:
	// unbound, nested_changed, reclassified, catalogue_drift), or unbound
	// for a policy bound to no requester.
	InactiveReason *string `json:"inactive_reason"`
}

// SessionPolicies returns the session's policies (GET
// /v1/sessions/{id}/policies), each with its state now. Returns
// fault.CodeInvalid for an id usage.CheckSessionID refuses, and the
// store's codes.
func (g *Gate) SessionPolicies(ctx context.Context, sessionID string) ([]PolicyState, error) {
	if err := usage.CheckSessionID(sessionID); err != nil {
		return nil, err
	}
	ps, err := g.turns.Policies(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	bound := make([]*binding.Binding, len(ps))
	for i, p := range ps {
		bound[i] = p.Binding
	}
	now, err := g.svc.BindingsNow(ctx, bound)
	if err != nil {
		return nil, err
	}
	out := make([]PolicyState, len(ps))
	for i, p := range ps {
		out[i].SessionPolicy = p
		why := binding.InactiveUnbound
		if b := p.Binding; b != nil && p.RequestedBy != "" {
			why = b.Check(now[i])
		}
		if why != "" {
			out[i].InactiveReason = &why
		}
	}
	return out, nil
}
