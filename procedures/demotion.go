package procedures

import (
	"context"
	"fmt"
	"strings"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
)

// DefaultDemoteAfter is the number of consecutive failures of a current
// version that demote its procedure when --demote-after is not set.
const DefaultDemoteAfter = 3

// MaxDemoteAfter bounds --demote-after.
const MaxDemoteAfter = 1000

// Demotion is what a run did to its procedure's demotion (UseResult).
type Demotion string

// The demotions.
const (
	// DemotionNone: the run changed nothing.
	DemotionNone Demotion = ""
	// DemotionDemoted: the run's failure demoted the procedure.
	DemotionDemoted Demotion = "demoted"
	// DemotionLifted: the procedure's demotion was lifted (a verification,
	// an operator; Store.LiftDemotion).
	DemotionLifted Demotion = "lifted"
)

// DemotedAfter is docs/design.md's demotion rule, its one implementation
// (Neo4j's fragments/demotion.cypher applies it to the same inputs, and
// graph/neo4j's TestDemotionIsGos checks it against this on every case):
// whether a procedure is demoted after a run of one of its versions that
// failed under failure ("": succeeded), h that version's health with the
// run counted. Only a failure of the current version that counts toward
// demotion (CountsTowardDemotion) can demote: once the streak
// (Health.DemotionStreak) reaches after (0: never) and its failures came
// from two callers or more (SeveralCallers), since a caller can make any
// counted class happen by its arguments. No run lifts a demotion: a
// verification that passes under the current catalogue, a promote or an
// operator does (Service.LiftDemotion).
func DemotedAfter(wasDemoted, current bool, failure string, h Health, after int) bool {
	if wasDemoted || !current || !CountsTowardDemotion(failure) {
		return wasDemoted
	}
	return after > 0 && h.DemotionStreak >= int64(after) && SeveralCallers(h.StreakCallers[0], h.StreakCallers[1])
}

// DemotionOf is the Demotion of going from was to now.
func DemotionOf(was, now bool) Demotion {
	switch {
	case now && !was:
		return DemotionDemoted
	case was && !now:
		return DemotionLifted
	}
	return DemotionNone
}

// CheckDemoteAfter checks a --demote-after setting.
func CheckDemoteAfter(n int) error {
	if n < 0 || n > MaxDemoteAfter {
		return fmt.Errorf("demote-after must be 0 (never) to %d, not %d", MaxDemoteAfter, n)
	}
	return nil
}

// DemoteParams is what a store that cannot run Go needs to apply
// DemotedAfter to the run of in (nil when in has no run): whether its
// failure counts toward demotion, the setting, where the version's health
// vector keeps the streak and its caller slots, and CallerSpan.
func DemoteParams(in UseInput) map[string]any {
	if in.Run == nil {
		return nil
	}
	return map[string]any{"counted": CountsTowardDemotion(in.Run.Failure), "after": int64(in.DemoteAfter),
		"streak": int64(hvStreak), "hi": int64(hvCallersHi), "lo": int64(hvCallersLo), "span": CallerSpan}
}

// StreakReset is what lifting a demotion does to the current version's
// health vector (HealthDelta's rule): its demotion streak and caller
// slots start again from 0, the rest kept, so the next failure alone does
// not demote it again.
func StreakReset() HealthDelta {
	d := HealthDelta{Keep: make([]int64, HealthLen), Add: make([]int64, HealthLen), Floor: make([]int64, HealthLen)}
	for i := range d.Keep {
		d.Keep[i] = 1
	}
	d.Keep[hvStreak], d.Keep[hvCallersHi], d.Keep[hvCallersLo] = 0, 0, 0
	return d
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
// fault.CodeConflict (reason ReasonNotDemoted: nothing to lift; nothing
// is recorded).
func (s *Service) LiftDemotion(ctx context.Context, r LiftDemotionRequest) (*Procedure, audit.Decision, error) {
	if len(r.Reason) > MaxReasonBytes {
		return nil, audit.Decision{}, fault.Errorf(fault.CodeInvalid, "reason is longer than %d bytes", MaxReasonBytes).WithDetails("field", "reason")
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
	s.feed.Publish(Change{Kind: ChangeRestore, Procedure: stored.Name, CodeHash: stored.CodeHash, Decision: rec.ID})
	return stored, rec, nil
}
