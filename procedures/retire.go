package procedures

import (
	"context"
	"strings"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/changes"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/fields"
)

// RetireRequest retires a procedure (Retired) or brings it back.
type RetireRequest struct {
	Name    string
	Retired bool
	Reason  string
	Actor   string
}

// SetRetired retires a procedure or brings it back, audited with one
// decision of kind retire (reason retired or unretired, the operator's
// reason as its note). A retired procedure is kept with its versions,
// counts and grant, and still listed with its state, but it is not exposed
// (Class.exposed), so planners, the planner view and MCP do not see it, and
// an invoke of it is denied with reason retired. Retiring needs a reason.
// Returns fault.CodeNotFound or fault.CodeInvalid.
func (s *Service) SetRetired(ctx context.Context, r RetireRequest) (*Procedure, audit.Decision, error) {
	reason := strings.TrimSpace(r.Reason)
	switch {
	case len(r.Reason) > fields.MaxReasonBytes:
		return nil, audit.Decision{}, fault.Errorf(fault.CodeInvalid, "reason is longer than %d bytes", fields.MaxReasonBytes).WithDetails("field", "reason")
	case r.Retired && reason == "":
		return nil, audit.Decision{}, fault.Errorf(fault.CodeInvalid, "retiring a procedure needs a reason").WithDetails("field", "reason")
	}
	p, v, err := s.load(ctx, r.Name)
	if err != nil {
		return nil, audit.Decision{}, err
	}
	d := audit.Decision{Kind: audit.KindRetire, Procedure: p.Name, CodeHash: p.CodeHash, Outcome: audit.Allowed, Reason: audit.ReasonUnretired,
		Actor: r.Actor, Note: reason}
	if r.Retired {
		d.Reason = audit.ReasonRetired
	}
	var stored *Procedure
	rec, err := s.rec.RecordWith(d, func(d audit.Decision) error {
		var ret *Retirement
		if r.Retired {
			ret = &Retirement{RetiredBy: d.Actor, RetiredAt: d.At, Reason: d.Note}
		}
		var err error
		stored, err = s.store.SetRetired(ctx, p.Name, ret, d)
		return err
	})
	if err != nil {
		return nil, audit.Decision{}, err
	}
	v.decorate(stored)
	kind := changes.ChangeUnretire
	if r.Retired {
		kind = changes.ChangeRetire
	}
	s.feed.Publish(changes.Change{Kind: kind, Procedure: stored.Name, CodeHash: p.CodeHash, Decision: rec.ID})
	return stored, rec, nil
}
