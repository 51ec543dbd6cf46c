package procedures

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/procgraph/procgraph/binding"
	"github.com/procgraph/procgraph/internal/jsonvalue"
)

// view is what classification needs at one moment: the current catalogue
// and the procedures that nested proc__ references point to.
type view struct {
	cat           *Catalogue
	procs         map[string]*Procedure
	allowMutating bool
	flows         *flowCache
	decor         *decorations // nil: nothing cached
}

// newView loads the catalogue (from the authorization cache while it is
// trusted: Service.catalogue) and, transitively up to MaxNesting levels,
// every procedure referenced from roots' signatures.
func (s *Service) newView(ctx context.Context, roots []*Procedure) (*view, error) {
	cat, err := s.catalogue(ctx)
	if err != nil {
		return nil, err
	}
	s.holdCatalogue(cat)
	return s.viewOf(ctx, cat, roots)
}

// viewWithout is a view over the catalogue cat, already read, for
// procedures that name no procedure.
func (s *Service) viewWithout(cat *Catalogue) *view {
	return &view{cat: cat, procs: map[string]*Procedure{}, allowMutating: s.opts.AllowMutatingAutorun, flows: s.flows, decor: s.decor}
}

// holdCatalogue keeps cat as the catalogue this service read last
// (heldCatalogue).
func (s *Service) holdCatalogue(cat *Catalogue) {
	if cat != nil {
		s.held.Store(cat)
	}
}

// heldCatalogue is the catalogue this service read last, nil before the
// first read: a capture of a plain signature is prepared under it, which
// the capture's write checks is still the stored one
// (CaptureInput.Catalogue), and a capture that could not read the
// catalogue again after its write decorates its answer with it (Capture).
func (s *Service) heldCatalogue() *Catalogue { return s.held.Load() }

// viewOf is newView over the catalogue cat, already read.
func (s *Service) viewOf(ctx context.Context, cat *Catalogue, roots []*Procedure) (*view, error) {
	v := s.viewWithout(cat)
	if err := s.addRefs(ctx, v, roots); err != nil {
		return nil, err
	}
	return v, nil
}

// addRefs loads into v, transitively up to MaxNesting levels, the
// procedures referenced from roots' signatures that v lacks.
func (s *Service) addRefs(ctx context.Context, v *view, roots []*Procedure) error {
	frontier := roots
	for depth := 0; depth <= MaxNesting && len(frontier) > 0; depth++ {
		var want []string
		seen := map[string]bool{}
		for _, p := range frontier {
			for _, ref := range p.procRefs() {
				if _, have := v.procs[ref]; !have && !seen[ref] {
					seen[ref] = true
					want = append(want, ref)
				}
			}
		}
		if len(want) == 0 {
			break
		}
		got, err := s.store.GetMany(ctx, want)
		if err != nil {
			return err
		}
		frontier = frontier[:0:0]
		for _, name := range want {
			if p, ok := got[name]; ok {
				v.procs[name] = p
				frontier = append(frontier, p)
			}
		}
	}
	return nil
}

// classify classifies a signature in this view.
func (v *view) classify(signature []string) Classification {
	return Classify(signature, v.cat, v.procs)
}

// decorate fills p's derived fields: classification, exposure, the state of
// its grant, its description and its input schema typed from the catalogue
// (TypedSchema, with its warnings). The catalogue-derived parts come from
// the service's decoration cache while their inputs are unchanged
// (decorationOf).
func (v *view) decorate(p *Procedure) {
	d := v.decorationOf(p)
	c := d.class
	p.ReadOnly = c.ReadOnly
	p.StateChangingTools = jsonvalue.List(c.StateChangingTools)
	p.UnknownTools = jsonvalue.List(c.UnknownTools)
	p.ExternalAccess = c.ExternalAccess
	p.Problem = c.Problem
	p.Exposed = ClassOf(p.Status, p.Opaque, p.Signature, c, p.Retired != nil, p.Demoted).exposed(v.allowMutating)
	var bound *binding.Binding
	if p.Grant.Held() {
		bound = v.procBinding(p, c)
	}
	p.AutoRun = autoRunState(p, c.ReadOnly, bound, v.allowMutating)
	p.AutoRun.GrantRefusal = ptr(grantRefusal(p, v.allowMutating))
	p.AutoRun.Grantable = *p.AutoRun.GrantRefusal == ""
	if p.AutoRun.Grantable {
		p.AutoRun.GrantRefusal = nil
	}
	p.Description = d.description
	p.InputSchema = d.schema
	p.Drift = DriftOf(p.Baseline, v.cat)
	p.Stale, p.DriftRevision = len(p.Drift) > 0, v.cat.Revision
	if len(d.typeWarnings) > 0 {
		// Stored warnings may be shared with a store's cache: never append in place.
		p.Warnings = append(slices.Clip(p.Warnings), d.typeWarnings...)
	}
	if p.Warnings == nil {
		p.Warnings = []Warning{}
	}
	if p.Causes == nil {
		p.Causes = []CauseLink{}
	}
	if p.Parameters == nil {
		p.Parameters = []string{}
	}
}

// The reasons a stored grant is not active, beside binding.Binding.Check's
// (binding.InactiveCodeChanged …).
const (
	inactiveNotReadOnly  = "not_read_only"
	inactiveNotSucceeded = "not_succeeded"
	// inactiveUnhealthy: the procedure is demoted (Procedure.Demoted).
	inactiveUnhealthy = "unhealthy"
)

// procBinding is the binding of p's current version classified as c in v:
// what a grant given now binds to (Binding).
func (v *view) procBinding(p *Procedure, c Classification) *binding.Binding {
	return v.bindingOf(p.CodeHash, v.flows.statementHash(p), p.Signature, c)
}

// autoRunState derives the API's auto_run object: a grant is active only
// while its code hash is current, the procedure succeeded and is not
// demoted (unhealthy), it is read-only
// or mutating auto-run is on, and what it was granted for is unchanged
// (Binding.Check against cur, p's binding now: unbound, code_changed,
// nested_changed, reclassified, catalogue_drift).
func autoRunState(p *Procedure, readOnly bool, cur *binding.Binding, allowMutating bool) autoRun {
	g := p.Grant
	if !g.Held() {
		return autoRun{}
	}
	a := autoRun{Enabled: true, GrantedBy: ptr(g.GrantedBy), Reason: ptr(g.Reason), CodeHash: ptr(g.CodeHash)}
	at := g.GrantedAt
	a.GrantedAt = &at
	switch {
	case g.CodeHash != p.CodeHash:
		a.InactiveReason = ptr(binding.InactiveCodeChanged)
	case p.Status != StatusSucceeded:
		a.InactiveReason = ptr(inactiveNotSucceeded)
	case p.Demoted:
		a.InactiveReason = ptr(inactiveUnhealthy)
	case !readOnly && !allowMutating:
		a.InactiveReason = ptr(inactiveNotReadOnly)
	default:
		if why := g.Binding.Check(cur); why != "" {
			a.InactiveReason = ptr(why)
		} else {
			a.Active = true
		}
	}
	return a
}

// Describe is the description planners see: the composed tools, the
// summary and the causes.
func Describe(p *Procedure) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Composes %s.", joinAnd(p.Signature))
	if s := strings.TrimSpace(p.Summary); s != "" {
		b.WriteString(" ")
		b.WriteString(strings.TrimSuffix(s, "."))
		b.WriteString(".")
	}
	if len(p.Causes) > 0 {
		names := make([]string, len(p.Causes))
		for i, c := range p.Causes {
			names[i] = c.Name
		}
		sort.Strings(names)
		fmt.Fprintf(&b, " Addressed: %s.", strings.Join(names, "; "))
	}
	return b.String()
}

func joinAnd(names []string) string {
	switch len(names) {
	case 0:
		return "no tools"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func ptr[T any](v T) *T { return &v }
