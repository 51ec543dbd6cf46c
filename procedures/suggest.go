package procedures

import (
	"context"
	"fmt"
	"slices"

	"github.com/procgraph/procgraph/reuse"
	"github.com/procgraph/procgraph/signature"
)

// suggestScan is how many exposed procedures holding every tool Suggest
// looks at (in find order: the most used first).
const suggestScan = 50

// Suggest is the one rule of reuse before regenerate: the exposed procedure
// whose signature is exactly signature, else, among the exposed procedures
// whose signature holds every name of it (the suggestScan most used that a
// Bounded find reaches: a read that does not grow with the store), the
// one with the fewest tools (the most used among equals). except is a
// procedure never suggested (the procedure of that signature, which a
// capture just stored); nil when none fits.
// The page is not decorated: the rule reads names and signatures only. A
// capture asks the same of its page (captureSuggestion).
func (s *Service) Suggest(ctx context.Context, signature []string, except string) (*reuse.Suggestion, error) {
	if len(signature) == 0 {
		return nil, nil
	}
	// A tool that keeps every procedure holding it from being exposed
	// (noneExposedWith), as the catalogue read last says and the current
	// one confirms: no page to read.
	if noneExposedWith(signature, s.heldCatalogue(), s.opts.AllowMutatingAutorun) {
		cat, err := s.store.Catalogue(ctx)
		if err != nil {
			return nil, err
		}
		s.holdCatalogue(cat)
		if noneExposedWith(signature, cat, s.opts.AllowMutatingAutorun) {
			return nil, nil
		}
	}
	page, total, cat, err := s.suggestPage(ctx, signature)
	if err != nil {
		return nil, err
	}
	sg, full := pickSuggestion(page, total, signature, except)
	if (sg == nil || sg.Reason != reuse.SuggestSameSignature) && except == "" && full {
		// The page may have left out the exact one (less used than
		// suggestScan procedures holding more, or than those the bounded
		// read reached: total -1): look it up by its names. (A procedure
		// is the only one of its signature: with except, there is none to
		// look up.)
		exact, err := s.exactExposed(ctx, signature, except, cat)
		if err != nil {
			return nil, err
		}
		if exact != "" {
			return sameSignature(exact), nil
		}
	}
	return sg, nil
}

// suggestPage reads the page Suggest chooses from — the suggestScan most
// used exposed procedures holding every name of signature, a Bounded find
// — and the catalogue with it. The store's exposed filter is the exposure
// rule (Class.exposed on the classification the store keeps, the one
// p.Exposed is computed from): every procedure of the page is exposed. It
// does not depend on a capture of signature's procedure (never its own
// suggestion), so a capture asks its store to read it with its write
// (CaptureInput.Page).
func (s *Service) suggestPage(ctx context.Context, signature []string) ([]*Procedure, int, *Catalogue, error) {
	q := suggestQuery(signature, s.opts.AllowMutatingAutorun)
	if err := q.Validate(); err != nil {
		return nil, 0, nil, err
	}
	return s.findWithCatalogue(ctx, *q)
}

// suggestQuery is the Find of Suggest's page for signature (suggestPage),
// which a capture asks its store to read with its write
// (CaptureInput.Page): the suggestScan most used exposed procedures
// holding every name of it, Bounded.
func suggestQuery(signature []string, allowMutating bool) *Query {
	exposed := true
	return &Query{Tools: signature, Exposed: &exposed, AllowMutating: allowMutating, Limit: suggestScan, SkipTotal: true, Bounded: true}
}

// pickSuggestion is Suggest's choice on its page (suggestPage, total as
// it answered): the procedure with exactly signature's tools, else the one
// with the fewest, never except; nil when none. full reports whether the
// page may have left out the exact one (full, or bounded: total -1), which
// only a look-up by its names can then tell.
func pickSuggestion(page []*Procedure, total int, signature []string, except string) (sg *reuse.Suggestion, full bool) {
	var best *Procedure
	for _, p := range page {
		if p.Name == except {
			continue
		}
		if best == nil || len(p.Signature) < len(best.Signature) {
			best = p
		}
	}
	if best != nil && len(best.Signature) == len(signature) {
		return sameSignature(best.Name), false
	}
	full = total < 0 || len(page) >= suggestScan
	if best == nil {
		return nil, full
	}
	return &reuse.Suggestion{Tool: best.Name, Reason: reuse.SuggestCoveredBy, Message: fmt.Sprintf(
		"%s is an exposed procedure that composes all of these tools (and %d more): call it as a tool instead of sending this code again",
		best.Name, len(best.Signature)-len(signature))}, full
}

// exactExposed is the name of the exposed procedure whose signature is
// exactly sig (not except), "" when there is none: it looks up
// the names a procedure of that signature can be stored under (those
// captureNamed tries) in one read.
func (s *Service) exactExposed(ctx context.Context, sig []string, except string, cat *Catalogue) (string, error) {
	var known func(string) bool
	if cat != nil {
		known = cat.Has
	}
	names := append(signature.Names(sig, known), signature.ProcedureName(sig), signature.HashedName(sig))
	slices.Sort(names)
	names = slices.Compact(names)
	stored, err := s.store.GetMany(ctx, names)
	if err != nil {
		return "", err
	}
	v := s.viewWithout(cat)
	for _, name := range names {
		p := stored[name]
		if p == nil || name == except || !slices.Equal(p.Signature, sig) {
			continue
		}
		v.decorate(p)
		if p.Exposed {
			return name, nil
		}
	}
	return "", nil
}

// Advice is Suggest's answer for the code o captured, with the procedure
// it stored included: that procedure when it is exposed (o.Suggestion never
// names a procedure the capture created), else o.Suggestion, which is
// Suggest except that procedure, the only one of its signature. So a caller
// that captured (a turn) needs no second Suggest.
func (o *CaptureOutcome) Advice() *reuse.Suggestion {
	if o.Procedure != nil && o.Procedure.Exposed && !o.Use {
		return sameSignature(o.Procedure.Name)
	}
	return o.Suggestion
}

// sameSignature is the Suggestion of the exposed procedure name, whose
// signature is exactly the code's.
func sameSignature(name string) *reuse.Suggestion {
	return &reuse.Suggestion{Tool: name, Reason: reuse.SuggestSameSignature, Message: fmt.Sprintf(
		"%s is an exposed procedure with exactly these tools: call it as a tool instead of sending this code again", name)}
}
