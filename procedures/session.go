package procedures

import (
	"context"

	"github.com/procgraph/procgraph/internal/fields"
)

// CheckSessionID is the rule on a session id, wherever one enters (a
// capture, an invoke, a turn, MCP, the session-policy routes; capture and
// invoke take "" for none): fields.SessionID, 1 to MaxKeyBytes bytes of
// UTF-8 without control characters (the schemas publish the same rule). A session id is a key the stores build others from
// (a NUL would let one session's id be a prefix of another's keys) and a
// path segment; nothing else is asked of it ("/" and ".." are as good as
// any other character). Returns fault.CodeInvalid (field session_id).
func CheckSessionID(id string) error {
	return sessionID.CheckString(id)
}

// sessionID is the session id where one is required.
var sessionID = fields.SessionID.NonEmpty()

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
// fault.CodeInvalid for an id CheckSessionID refuses, and the store's codes.
func (s *Service) SessionPolicies(ctx context.Context, sessionID string) ([]PolicyState, error) {
	if err := CheckSessionID(sessionID); err != nil {
		return nil, err
	}
	ps, err := s.store.Policies(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	roots := []*Procedure{}
	for _, p := range ps {
		if p.Binding != nil {
			roots = append(roots, &Procedure{Signature: p.Binding.Signature})
		}
	}
	v, err := s.newView(ctx, roots)
	if err != nil {
		return nil, err
	}
	out := make([]PolicyState, len(ps))
	for i, p := range ps {
		out[i].SessionPolicy = p
		why := InactiveUnbound
		if b := p.Binding; b != nil && p.RequestedBy != "" {
			why = b.Check(v.bindingOf(b.CodeHash, b.StatementHash, b.Signature, v.classify(b.Signature)))
		}
		if why != "" {
			out[i].InactiveReason = ptr(why)
		}
	}
	return out, nil
}
