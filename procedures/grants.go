package procedures

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/changes"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/fields"
)

// AutoRunRequest is set_procedure_auto_run: enable or revoke a durable grant.
type AutoRunRequest struct {
	Name    string
	Enabled bool
	Reason  string
	Actor   string
}

// SetAutoRun grants (bound to the current version as it is classified now:
// Grant.Binding) or revokes durable
// auto-run, and audits it with one decision record. Returns fault.CodeNotFound,
// fault.CodeInvalid, or fault.CodeConflict with details reason "not_read_only" (a
// state-changing procedure while mutating auto-run is off),
// "procedure_not_succeeded" or "code_changed" (the code changed while
// granting); a refusal is audited as a denied decision, which the error's
// details carry under "decision".
func (s *Service) SetAutoRun(ctx context.Context, r AutoRunRequest) (*Procedure, audit.Decision, error) {
	if len(r.Reason) > fields.MaxReasonBytes {
		return nil, audit.Decision{}, fault.Errorf(fault.CodeInvalid, "reason is longer than %d bytes", fields.MaxReasonBytes).WithDetails("field", "reason")
	}
	// The first attempt is prepared from what this service knows of the
	// procedure and the catalogue, when it knows enough (knownForWrite),
	// and the write checks both: when either changed, it writes nothing
	// and the next attempt reads them (ADR 0047). A revoke binds to
	// nothing: when a promote races it, look again.
	for attempt := 1; ; attempt++ {
		p, d, err := s.setAutoRun(ctx, r, attempt == 1, attempt < maxGrantAttempts)
		if errors.Is(err, errRetryGrant) {
			continue
		}
		return p, d, err
	}
}

// maxGrantAttempts bounds how many times one grant or revoke is prepared.
const maxGrantAttempts = 3

// Grantable is the rule on what may hold a durable auto-run grant, the
// one home of it (set_procedure_auto_run, and a turn's auto_run
// approval): "" when p, classified now, may; else the refusal's reason,
// ReasonProcedureNotSucceeded (its current version did not succeed) or
// ReasonNotReadOnly (it changes state and mutating auto-run is off).
func (s *Service) Grantable(p *Procedure) string {
	return grantRefusal(p, s.opts.AllowMutatingAutorun)
}

// grantRefusal is Grantable's rule with the setting given: the service's
// answer, and the one decorate shows as auto_run.grantable.
func grantRefusal(p *Procedure, allowMutating bool) string {
	switch {
	case p.Status != StatusSucceeded:
		return audit.ReasonProcedureNotSucceeded
	case !p.ReadOnly && !allowMutating:
		return audit.ReasonNotReadOnly
	}
	return ""
}

// errRetryGrant asks SetAutoRun to prepare the change again, reading the
// procedure and the catalogue.
var errRetryGrant = errors.New("the procedure or the catalogue changed while granting or revoking")

// knownForWrite is procedure name as this service knows it (the authorization cache)
// decorated in the view of the catalogue it read last, to prepare a grant
// or revoke with no read; nil when it knows neither, or when the procedure
// names procedures: its grant's binding names their current versions,
// which the write does not check.
func (s *Service) knownForWrite(name string) (*Procedure, *view) {
	p, cat := s.auth.get(name), s.heldCatalogue()
	if p == nil || cat == nil || len(p.procRefs()) > 0 {
		return nil, nil
	}
	v := s.viewWithout(cat)
	v.decorate(p)
	return p, v
}

// setAutoRun is one attempt of SetAutoRun: prepared from what the service
// knows when fromKnown and it knows enough, else from a read. An attempt
// from what was known is never refused (errRetryGrant: it is prepared
// again from a read); one that was read is refused on a changed code hash
// unless it is a revoke and mayRetry.
func (s *Service) setAutoRun(ctx context.Context, r AutoRunRequest, fromKnown, mayRetry bool) (*Procedure, audit.Decision, error) {
	var p *Procedure
	var v *view
	if fromKnown {
		p, v = s.knownForWrite(r.Name)
	}
	known := p != nil
	if !known {
		var err error
		if p, v, err = s.load(ctx, r.Name); err != nil {
			return nil, audit.Decision{}, err
		}
	}
	d := audit.Decision{Kind: audit.KindRevoke, Procedure: p.Name, CodeHash: p.CodeHash, Outcome: audit.Allowed, Reason: audit.ReasonRevoked,
		Actor: r.Actor, Note: strings.TrimSpace(r.Reason)}
	if r.Enabled {
		d.Kind, d.Reason = audit.KindGrant, audit.ReasonGranted
		if refusal := s.Grantable(p); refusal != "" {
			if known {
				return nil, audit.Decision{}, errRetryGrant
			}
			return nil, audit.Decision{}, s.refuse(ctx, d, refusal, "auto-run cannot be granted: "+refusalText(refusal))
		}
	}
	var stored *Procedure
	rec, err := s.rec.RecordWith(d, func(d audit.Decision) error {
		var g *Grant
		if r.Enabled {
			g = &Grant{Enabled: true, GrantedBy: d.Actor, GrantedAt: d.At, Reason: d.Note, CodeHash: p.CodeHash,
				Binding: v.procBinding(p, v.classify(p.Signature))}
		}
		var err error
		stored, err = s.store.SetGrant(ctx, p.Name, g, p.CodeHash, v.cat, d)
		return err
	})
	if IsCatalogueChanged(err) && (known || mayRetry) {
		return nil, audit.Decision{}, errRetryGrant
	}
	if !IsCatalogueChanged(err) && fault.ErrorCode(err) == fault.CodeConflict && (known || (!r.Enabled && mayRetry)) {
		return nil, audit.Decision{}, errRetryGrant
	}
	if !IsCatalogueChanged(err) && fault.ErrorCode(err) == fault.CodeConflict {
		return nil, audit.Decision{}, s.refuse(ctx, d, audit.ReasonCodeChanged, "the procedure's code changed while granting; look again and retry")
	}
	if err != nil {
		return nil, audit.Decision{}, err
	}
	s.auth.remember(stored)
	v.decorate(stored)
	kind := changes.ChangeGrant
	if !r.Enabled {
		kind = changes.ChangeRevoke
	}
	s.feed.Publish(changes.Change{Kind: kind, Procedure: stored.Name, CodeHash: p.CodeHash, Decision: rec.ID})
	return stored, rec, nil
}

// PromoteRequest makes another version current.
type PromoteRequest struct {
	Name     string
	CodeHash string
	Reason   string
	Actor    string
}

// Promote makes a succeeded version current, audited. A grant bound to the
// previous hash stops being active. Returns fault.CodeNotFound, fault.CodeInvalid, or
// fault.CodeConflict (reason "procedure_not_succeeded") for a failed version.
func (s *Service) Promote(ctx context.Context, r PromoteRequest) (*Procedure, audit.Decision, error) {
	if len(r.Reason) > fields.MaxReasonBytes {
		return nil, audit.Decision{}, fault.Errorf(fault.CodeInvalid, "reason is longer than %d bytes", fields.MaxReasonBytes).WithDetails("field", "reason")
	}
	_, v, err := s.load(ctx, r.Name)
	if err != nil {
		return nil, audit.Decision{}, err
	}
	if err := checkVersionHash(r.Name, r.CodeHash); err != nil {
		return nil, audit.Decision{}, err
	}
	d := audit.Decision{Kind: audit.KindPromote, Procedure: r.Name, CodeHash: r.CodeHash, Outcome: audit.Allowed, Reason: audit.ReasonPromoted,
		Actor: r.Actor, Note: strings.TrimSpace(r.Reason)}
	var stored *Procedure
	rec, err := s.rec.RecordWith(d, func(d audit.Decision) error {
		var err error
		stored, err = s.store.Promote(ctx, r.Name, r.CodeHash, d)
		return err
	})
	if fault.ErrorCode(err) == fault.CodeConflict {
		return nil, audit.Decision{}, s.refuse(ctx, d, audit.ReasonProcedureNotSucceeded, "only a succeeded version can be promoted")
	}
	if err != nil {
		return nil, audit.Decision{}, err
	}
	s.auth.remember(stored)
	v.decorate(stored)
	s.feed.Publish(changes.Change{Kind: changes.ChangePromote, Procedure: stored.Name, CodeHash: r.CodeHash, Decision: rec.ID})
	return stored, rec, nil
}

// refuse records d as denied for reason (a new record) and returns the
// conflict to report, carrying it.
func (s *Service) refuse(ctx context.Context, d audit.Decision, reason, message string) error {
	d.ID, d.At = "", time.Time{}
	d.Outcome, d.Reason = audit.Denied, reason
	d, err := s.rec.Record(ctx, d)
	if err != nil {
		return err
	}
	return fault.Errorf(fault.CodeConflict, "%s", message).WithDetails("reason", reason).WithDetails(fault.DetailDecision, d)
}

func refusalText(reason string) string {
	switch reason {
	case audit.ReasonNotReadOnly:
		return "the procedure changes state and mutating auto-run is off"
	case audit.ReasonProcedureNotSucceeded:
		return "the procedure's current version did not succeed"
	}
	return reason
}

// checkVersionHash refuses, as not found, a code hash that cannot name a
// version (the wrong shape, or the "sha256:" form the API never gives):
// what promote and accept-drift answer before they write.
func checkVersionHash(name, codeHash string) error {
	if !codeHashShape.MatchString(codeHash) || strings.HasPrefix(codeHash, "sha256:") {
		return fault.Errorf(fault.CodeNotFound, "procedure %s has no version %s", name, codeHash)
	}
	return nil
}
