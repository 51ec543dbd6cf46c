package procedures

import (
	"context"
	"strings"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/signature"
)

// Turns returns the store of the turn gate (approvals, session policies).
func (s *Service) Turns() TurnStore { return s.store }

// Block is what the current catalogue and store say about a block an agent
// submits: its classification, the stored procedures its proc__ entries
// name (classified, with the state of their grants; a missing one is
// absent), and its input schema typed from the catalogue (TypedSchema).
type Block struct {
	Class       Classification
	Refs        map[string]*Procedure
	InputSchema map[string]any
	// Binding is the block as an authorization given now binds to it: its
	// hashes (the analysis's), classification, tools' schema hashes and
	// nested procedures. Everything in it was read by ClassifyBlock.
	Binding *Binding
}

// ClassifyBlock classifies an analysed block under the current catalogue.
func (s *Service) ClassifyBlock(ctx context.Context, a *signature.Analysis) (*Block, error) {
	root := &Procedure{Signature: a.Signature}
	v, err := s.newView(ctx, []*Procedure{root})
	if err != nil {
		return nil, err
	}
	b := &Block{Class: v.classify(a.Signature), Refs: map[string]*Procedure{}}
	for _, ref := range root.ProcRefs() {
		if p, ok := v.procs[ref]; ok {
			cp := *p
			v.decorate(&cp)
			b.Refs[ref] = &cp
		}
	}
	b.InputSchema, _ = TypedSchema(nil, a.Parameters, a.Flows, v.cat)
	b.Binding = v.bindingOf(a.CodeHash, a.StatementHash, a.Signature, b.Class)
	return b, nil
}

// SetPolicy stores a session's policy for one code hash, audited with one
// decision of kind policy (reason policy_set; who, the session and the
// code hash; the choice and the operator's reason in its note).
func (s *Service) SetPolicy(ctx context.Context, p SessionPolicy, reason string) (Decision, error) {
	p.SetAt = s.now()
	d := Decision{Kind: KindPolicy, CodeHash: p.CodeHash, Session: p.SessionID, Outcome: Allowed, Reason: ReasonPolicySet,
		Actor: p.SetBy, Note: strings.TrimSpace(string(p.Policy) + ": " + reason), At: p.SetAt}
	return s.rec.RecordWith(d, func(d Decision) error { return s.store.PutPolicy(ctx, p, d) })
}

// RevokePolicies deletes a session's policies whose code hash starts with
// prefix ("" for all), audited in the same transaction with one decision
// of kind policy (reason policy_revoked) per revoked policy, each naming
// who, the session and the policy's code hash — or, when revoking all
// found none, one record without a code hash, so that the attempt is
// audited too. It returns how many it revoked and the records. A prefix
// must be at least 8 hex characters and match exactly one policy
// (fault.CodeInvalid, fault.CodeConflict); the session id must pass CheckSessionID
// (fault.CodeInvalid).
func (s *Service) RevokePolicies(ctx context.Context, sessionID, prefix, actor string) (int, []Decision, error) {
	if err := CheckSessionID(sessionID); err != nil {
		return 0, nil, err
	}
	if prefix != "" && (len(prefix) < 8 || len(prefix) > 64 || strings.Trim(prefix, "0123456789abcdef") != "") {
		return 0, nil, fault.Errorf(fault.CodeInvalid, "a policy prefix is 8 to 64 lowercase hex characters of a code hash").WithDetails("field", "prefix")
	}
	base := Decision{Kind: KindPolicy, Session: sessionID, Outcome: Allowed, Reason: ReasonPolicyRevoked, Actor: actor}
	n := 0
	recs, err := s.rec.RecordMany(func(build func([]Decision) ([]Decision, error)) error {
		var err error
		n, err = s.store.DeletePolicies(ctx, sessionID, prefix, func(hashes []string) ([]Decision, error) {
			ds := []Decision{base}
			if len(hashes) > 0 {
				ds = make([]Decision, len(hashes))
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

// GrantsList returns every procedure holding a durable auto-run grant
// (Store.Granted), by name, classified (AutoRun says whether it is active).
func (s *Service) GrantsList(ctx context.Context) ([]*Procedure, error) {
	granted, err := s.store.Granted(ctx)
	if err != nil {
		return nil, err
	}
	v, err := s.newView(ctx, granted)
	if err != nil {
		return nil, err
	}
	out := []*Procedure{}
	for _, p := range granted {
		v.decorate(p)
		out = append(out, p)
	}
	return out, nil
}
