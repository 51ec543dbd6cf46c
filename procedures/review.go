package procedures

import (
	"context"
	"slices"
	"unicode/utf8"

	"github.com/procgraph/procgraph/binding"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/internal/jsonvalue"
	"github.com/procgraph/procgraph/signature"
)

// Reach returns every proc__ a block bound by b may reach, each level,
// as b bound it: the version of its hash with that version's code
// (truncated within the review's bounds), classification as b recorded
// it, and where it sits in the call tree; breadth first, by name within a
// level. A nil b reaches nothing (an unbound turn is reviewed again
// before it runs).
func (s *Service) Reach(ctx context.Context, b *binding.Binding) ([]binding.Reached, error) {
	out := []binding.Reached{}
	if b == nil || len(b.Nested) == 0 {
		return out, nil
	}
	bound := map[string]binding.BoundNested{}
	for _, n := range b.Nested {
		bound[n.Name] = n
	}
	callers := map[string][]string{}
	var level []string
	for _, n := range b.Signature {
		if IsProcName(n) {
			level = append(level, n)
			callers[n] = []string{""}
		}
	}
	seen := map[string]bool{}
	budget := fields.MaxReviewNestedBytes
	for depth := 1; len(level) > 0; depth++ {
		slices.Sort(level)
		next := map[string]bool{}
		for _, name := range level {
			if seen[name] {
				continue
			}
			seen[name] = true
			n, ok := bound[name]
			if !ok {
				continue // beyond MaxNesting: the binding does not hold it, and its call is refused
			}
			r := binding.Reached{Name: name, Depth: depth, CalledBy: callers[name], CodeHash: n.CodeHash, ReadOnly: n.ReadOnly,
				StateChangingTools: jsonvalue.List(slices.Clone(n.StateChangingTools)), Signature: []string{}}
			if n.CodeHash != binding.NestedAbsent {
				v, err := s.store.Version(ctx, name, n.CodeHash)
				if fault.ErrorCode(err) == fault.CodeNotFound {
					r.Unavailable = true
					out = append(out, r)
					continue
				}
				if err != nil {
					return nil, err
				}
				r.Dialect, r.CodeBytes = v.Dialect, len(v.Code)
				r.Code, r.Truncated = clip(v.Code, min(fields.MaxReviewCodeBytes, budget))
				budget -= len(r.Code)
				d, err := signature.ParseDialect(v.Dialect)
				if err == nil {
					var a *signature.Analysis
					if a, err = signature.Analyze(v.Code, d); err == nil {
						r.Signature = jsonvalue.List(a.Signature)
					}
				}
				for _, c := range r.Signature {
					if IsProcName(c) && !seen[c] {
						next[c] = true
						if !slices.Contains(callers[c], name) {
							callers[c] = append(callers[c], name)
						}
					}
				}
			}
			out = append(out, r)
		}
		level = level[:0]
		for c := range next {
			level = append(level, c)
		}
	}
	for i := range out {
		slices.Sort(out[i].CalledBy)
	}
	return out, nil
}

// clip is code cut to at most n bytes at a rune boundary, and whether
// anything was cut.
func clip(code string, n int) (string, bool) {
	if len(code) <= n {
		return code, false
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(code[n]) {
		n--
	}
	return code[:n], true
}
