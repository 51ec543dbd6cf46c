package procedures

import (
	"context"
	"fmt"
	"strings"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/changes"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/internal/fields"
)

// DemoteParams is what a store that cannot run Go needs to apply
// DemotedAfter to the run of in (nil when in has no run): whether its
// failure counts toward demotion, the setting, where the version's health
// vector keeps the streak and its caller slots, and CallerSpan.
func DemoteParams(in UseInput) map[string]any {
	if in.Run == nil {
		return nil
	}
	return health.DemoteParamsOf(in.Run.Failure, in.DemoteAfter)
}

// LiftDemotionRequest is an operator lifting a procedure's demotion.
type LiftDemotionRequest struct {
	Name   string
	Reason string
	Actor  string
}

// LiftDemotion lifts a procedure's demotion for an operator (docs/
// design.md "Health of each version"): the procedure is exposed again and
// its current version's demotion streak starts from 0, audited as one
// health decision (reason health_restored, the operator as actor, their
// reason as note) and published as ChangeRestore. Returns
// fault.CodeNotFound, fault.CodeInvalid (a reason too long) or
// fault.CodeConflict (reason reasonNotDemoted: nothing to lift; nothing
// is recorded).
func (s *Service) LiftDemotion(ctx context.Context, r LiftDemotionRequest) (*Procedure, audit.Decision, error) {
	if len(r.Reason) > fields.MaxReasonBytes {
		return nil, audit.Decision{}, fault.Errorf(fault.CodeInvalid, "reason is longer than %d bytes", fields.MaxReasonBytes).WithDetails("field", "reason")
	}
	p, v, err := s.load(ctx, r.Name)
	if err != nil {
		return nil, audit.Decision{}, err
	}
	d := audit.Decision{Kind: audit.KindHealth, Procedure: p.Name, CodeHash: p.CodeHash, Outcome: audit.Allowed, Reason: audit.ReasonHealthRestored,
		Actor: r.Actor, Note: strings.TrimSpace(r.Reason)}
	stored, rec, err := s.undemote(ctx, LiftInput{Name: p.Name}, d)
	if err != nil {
		return nil, audit.Decision{}, err
	}
	v.decorate(stored)
	return stored, rec, nil
}

// LiftVerified lifts the demotion of the procedure name after a
// verification of its version codeHash against its recordings passed
// under the catalogue revision (replay.Replayer.Verify): only while that
// version is current, the procedure demoted and the catalogue still that
// revision (else it reports false and records nothing). Audited as a
// health decision by procgraph (reason health_restored) and published as
// ChangeRestore.
func (s *Service) LiftVerified(ctx context.Context, name, codeHash, revision string, recordings int) (bool, error) {
	if codeHash == "" || revision == "" {
		return false, fault.Errorf(fault.CodeInvalid, "lifting a demotion by a verification needs the version and the catalogue revision it passed under")
	}
	if p, err := s.store.Get(ctx, name); err != nil || !p.Demoted || p.CodeHash != codeHash {
		return false, err // most verifications lift nothing: no write is tried
	}
	d := audit.Decision{Kind: audit.KindHealth, Procedure: name, CodeHash: codeHash, Outcome: audit.Allowed, Reason: audit.ReasonHealthRestored,
		Actor: audit.ActorProcgraph, Note: fmt.Sprintf("a verification of the current version against its %d recordings passed under the current catalogue", recordings)}
	_, _, err := s.undemote(ctx, LiftInput{Name: name, CodeHash: codeHash, Revision: revision}, d)
	if fault.ErrorCode(err) == fault.CodeConflict {
		return false, nil
	}
	return err == nil, err
}

// undemote has the store lift a demotion as in asks, recording d with it, and
// publishes the change.
func (s *Service) undemote(ctx context.Context, in LiftInput, d audit.Decision) (*Procedure, audit.Decision, error) {
	var stored *Procedure
	rec, err := s.rec.RecordWith(d, func(d audit.Decision) error {
		in.Decision = d
		var err error
		stored, err = s.store.LiftDemotion(ctx, in)
		return err
	})
	if err != nil {
		return nil, audit.Decision{}, err
	}
	s.feed.Publish(changes.Change{Kind: changes.ChangeRestore, Procedure: stored.Name, CodeHash: stored.CodeHash, Decision: rec.ID})
	return stored, rec, nil
}
