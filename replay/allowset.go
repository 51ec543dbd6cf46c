package replay

import (
	"slices"

	"github.com/procgraph/procgraph/procedures"
)

// AllowSet returns the tools a replay may call at run time: the signature ∩
// the tools the verdict permits. A denied verdict permits nothing. An allowed
// one permits the signature's names that the classification knows (catalogue
// tools and stored procedures): the read-only ones always, the
// state-changing ones (tools and nested proc__ references that are not
// read-only, including cyclic or too deep ones) only when v.StateChanging.
// Unknown names are never permitted. The result is sorted, never nil, and
// always a subset of signature. Nested proc__ names in it are decided again,
// on their own, when they are called.
func AllowSet(signature []string, c procedures.Classification, v Verdict) []string {
	out := []string{}
	if !v.Allowed() {
		return out
	}
	for _, name := range signature {
		switch {
		case slices.Contains(c.UnknownTools, name):
		case slices.Contains(c.StateChangingTools, name) && !v.StateChanging:
		case slices.Contains(out, name):
		default:
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// classificationOf returns the classification the service derived for p.
func classificationOf(p *procedures.Procedure) procedures.Classification {
	return procedures.Classification{
		ReadOnly:           p.ReadOnly,
		StateChangingTools: p.StateChangingTools,
		UnknownTools:       p.UnknownTools,
		ExternalAccess:     p.ExternalAccess,
	}
}
