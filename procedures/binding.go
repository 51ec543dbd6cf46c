package procedures

import (
	"slices"
	"sort"

	"github.com/procgraph/procgraph/binding"
	"github.com/procgraph/procgraph/internal/jsonvalue"
)

// CheckNested returns binding.ReasonNestedChanged when p — the procedure name as
// it is now, nil when there is none — is not the nested procedure b
// reviewed, else "". A nil b (a run no authorization bound) checks nothing.
func CheckNested(b *binding.Binding, name string, p *Procedure) string {
	return b.CheckNested(boundNested(name, p))
}

// boundNested is p (classified) as a BoundNested; nil is absent.
func boundNested(name string, p *Procedure) binding.BoundNested {
	if p == nil {
		return binding.BoundNested{Name: name, CodeHash: binding.NestedAbsent, StateChangingTools: []string{}}
	}
	return binding.BoundNested{Name: name, CodeHash: p.CodeHash, ReadOnly: p.ReadOnly, StateChangingTools: jsonvalue.List(slices.Clone(p.StateChangingTools))}
}

// bindingOf is the binding of code (codeHash, statementHash) with
// signature sig classified as c in v: the schema hashes of its catalogue
// tools and, transitively within MaxNesting, the procedures it calls as v
// has them (each classified in v).
func (v *view) bindingOf(codeHash, statementHash string, sig []string, c Classification) *binding.Binding {
	b := &binding.Binding{CodeHash: codeHash, StatementHash: statementHash, Signature: jsonvalue.List(slices.Clone(sig)),
		ReadOnly: c.ReadOnly, StateChangingTools: jsonvalue.List(slices.Clone(c.StateChangingTools)),
		Tools: []binding.BoundTool{}, Nested: []binding.BoundNested{}}
	for _, n := range sig {
		if !IsProcName(n) {
			b.Tools = append(b.Tools, binding.BoundTool{Name: n, SchemaHash: v.cat.SchemaHash(n)})
		}
	}
	seen := map[string]bool{}
	frontier := sig
	for depth := 0; depth <= MaxNesting && len(frontier) > 0; depth++ {
		var next []string
		for _, n := range frontier {
			if !IsProcName(n) || seen[n] {
				continue
			}
			seen[n] = true
			p := v.procs[n]
			if p == nil {
				b.Nested = append(b.Nested, boundNested(n, nil))
				continue
			}
			nc := v.classify(p.Signature)
			b.Nested = append(b.Nested, binding.BoundNested{Name: n, CodeHash: p.CodeHash, ReadOnly: nc.ReadOnly,
				StateChangingTools: jsonvalue.List(slices.Clone(nc.StateChangingTools))})
			next = append(next, p.Signature...)
		}
		frontier = next
	}
	sort.Slice(b.Nested, func(i, j int) bool { return b.Nested[i].Name < b.Nested[j].Name })
	return b
}
