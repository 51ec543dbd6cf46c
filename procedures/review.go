package procedures

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/procgraph/procgraph/binding"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/internal/jsonvalue"
	"github.com/procgraph/procgraph/signature"
)

// Reached is one proc__ a reviewed block may reach, directly or through
// other procedures (docs/design.md "What the operator sees is what runs"):
// the version an authorization of the block binds to (Binding.Nested), with
// its code. An operator's approval covers exactly these versions: another
// current version is refused at run time (nested_changed).
type Reached struct {
	Name string `json:"name"`
	// Depth is its nesting level: 1 when the block calls it, 2 when a
	// procedure of level 1 does, and so on (at most MaxNesting + 1).
	Depth int `json:"depth"`
	// CalledBy names who calls it: "" for the block itself, else the
	// procedures of the level above, sorted.
	CalledBy []string `json:"called_by"`
	// CodeHash is the bound version's hash, NestedAbsent when no
	// procedure had the name (the call is refused).
	CodeHash           string   `json:"code_hash"`
	ReadOnly           bool     `json:"read_only"`
	StateChangingTools []string `json:"state_changing_tools"`
	// Signature is the tools the version calls.
	Signature []string `json:"signature"`
	Dialect   string   `json:"dialect"`
	// Code is the version's code, at most fields.MaxReviewCodeBytes of it
	// (and of what is left of fields.MaxReviewNestedBytes); Truncated says some was left
	// out, CodeBytes how long it is: the full text is the version's (GET
	// /v1/procedures/{name}/versions/{code_hash}).
	Code      string `json:"code"`
	CodeBytes int    `json:"code_bytes"`
	Truncated bool   `json:"truncated"`
	// Unavailable: the store has no version of that hash (an imported
	// approval's binding): nothing of it is shown, and since it cannot be
	// what runs now, resolving the approval finds the binding changed and
	// asks for a review again.
	Unavailable bool `json:"unavailable"`
}

// Reach returns every proc__ a block bound by b may reach, each level,
// as b bound it: the version of its hash with that version's code
// (truncated within the review's bounds), classification as b recorded
// it, and where it sits in the call tree; breadth first, by name within a
// level. A nil b reaches nothing (an unbound turn is reviewed again
// before it runs).
func (s *Service) Reach(ctx context.Context, b *binding.Binding) ([]Reached, error) {
	out := []Reached{}
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
			r := Reached{Name: name, Depth: depth, CalledBy: callers[name], CodeHash: n.CodeHash, ReadOnly: n.ReadOnly,
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

// Heading is r in one line, as a review in text shows it above its code:
// its name, level and callers, classification and code hash.
func (r Reached) Heading() string {
	by := "the block"
	if len(r.CalledBy) > 0 && r.CalledBy[0] != "" {
		by = strings.Join(r.CalledBy, ", ")
	}
	class := "read-only"
	if !r.ReadOnly {
		class = "changes state"
		if len(r.StateChangingTools) > 0 {
			class += " through " + strings.Join(r.StateChangingTools, ", ")
		}
	}
	switch {
	case r.CodeHash == binding.NestedAbsent:
		return fmt.Sprintf("%s (level %d, called by %s): no such procedure; its call is refused", r.Name, r.Depth, by)
	case r.Unavailable:
		return fmt.Sprintf("%s (level %d, called by %s): version %s is not in the store; resolving asks for a review again", r.Name, r.Depth, by, r.CodeHash)
	}
	return fmt.Sprintf("%s (level %d, called by %s): %s; code hash %s", r.Name, r.Depth, by, class, r.CodeHash)
}

// TruncatedText says, for a truncated r, how much of its code a review
// shows and where the whole text is ("" when nothing was cut).
func (r Reached) TruncatedText() string {
	if !r.Truncated {
		return ""
	}
	return fmt.Sprintf("truncated: %d of %d bytes shown; the whole code: procgraph versions %s %s (GET /v1/procedures/%s/versions/%s)",
		len(r.Code), r.CodeBytes, r.Name, r.CodeHash, r.Name, r.CodeHash)
}
