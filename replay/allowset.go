package replay

import (
	"slices"

	"github.com/procgraph/procgraph/decide"
	"github.com/procgraph/procgraph/procedures"
)

// AllowSet returns the tools a replay may call at run time: the signature ∩
// the tools the verdict permits. A denied verdict permits nothing. An allowed
// one permits only the signature's names the classification lists as known
// (catalogue tools and stored procedures): those in c.ReadOnlyTools always,
// those in c.StateChangingTools (tools and nested proc__ references that are
// not read-only) only when v.StateChanging. A name in neither list — unknown,
// or missing from an incomplete classification — is never permitted: the
// rule is a positive list, so it fails closed. The result is sorted, never
// nil, and always a subset of signature. Nested proc__ names in it are
// decided again, on their own, when they are called.
func AllowSet(signature []string, c procedures.Classification, v decide.Verdict) []string {
	out := []string{}
	if !v.Allowed() {
		return out
	}
	for _, name := range signature {
		known := slices.Contains(c.ReadOnlyTools, name) ||
			(v.StateChanging && slices.Contains(c.StateChangingTools, name))
		if known && !slices.Contains(c.UnknownTools, name) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// classificationOf returns the classification the service derived for p.
// A decorated procedure carries no list of its read-only names, so
// ReadOnlyTools is its signature without the names p lists as
// state-changing or unknown, and nothing at all when p has a Problem (a
// denied replay permits nothing anyway).
func classificationOf(p *procedures.Procedure) procedures.Classification {
	c := procedures.Classification{
		ReadOnly:           p.ReadOnly,
		StateChangingTools: p.StateChangingTools,
		UnknownTools:       p.UnknownTools,
		ExternalAccess:     p.ExternalAccess,
		Problem:            p.Problem,
	}
	if c.Problem == "" {
		for _, name := range p.Signature {
			if !slices.Contains(c.StateChangingTools, name) && !slices.Contains(c.UnknownTools, name) {
				c.ReadOnlyTools = append(c.ReadOnlyTools, name)
			}
		}
	}
	return c
}
