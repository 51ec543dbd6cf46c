package procedures

import "sort"

// MaxNesting is how deep proc__ references may nest.
const MaxNesting = 4

// Classification is what the current catalogue says about a signature.
type Classification struct {
	// ReadOnly is true iff every tool is known and read-only, recursively
	// through nested procedures, within MaxNesting and without a cycle.
	ReadOnly bool
	// StateChangingTools lists the known tools (and nested procedures) that
	// are not read-only, sorted.
	StateChangingTools []string
	// UnknownTools lists the names neither in the catalogue nor stored as
	// procedures, sorted.
	UnknownTools []string
	// ExternalAccess is true iff any tool, recursively, has external access.
	ExternalAccess bool
	// Problem is set when nesting is too deep or cyclic: ReasonNestingTooDeep or ReasonCycle.
	Problem string
}

// Classify classifies a signature against the catalogue. Nested proc__
// references are looked up in procs (the caller prefetches them); a missing
// one is unknown. Unknown means not read-only: classification fails closed.
func Classify(signature []string, cat *Catalogue, procs map[string]*Procedure) Classification {
	var c Classification
	state := map[string]bool{}
	unknown := map[string]bool{}
	c.ReadOnly = classifyInto(signature, cat, procs, 0, map[string]bool{}, state, unknown, &c)
	c.StateChangingTools = sortedKeys(state)
	c.UnknownTools = sortedKeys(unknown)
	return c
}

func classifyInto(signature []string, cat *Catalogue, procs map[string]*Procedure, depth int,
	path, state, unknown map[string]bool, c *Classification) bool {
	readOnly := true
	for _, name := range signature {
		if !IsProcName(name) {
			t, ok := cat.Tool(name)
			switch {
			case !ok:
				unknown[name] = true
				readOnly = false
			case !t.ReadOnly:
				state[name] = true
				readOnly = false
			}
			if ok && t.ExternalAccess {
				c.ExternalAccess = true
			}
			continue
		}
		p, ok := procs[name]
		switch {
		case !ok:
			unknown[name] = true
			readOnly = false
		case path[name]:
			c.Problem = ReasonCycle
			state[name] = true
			readOnly = false
		case depth+1 > MaxNesting:
			if c.Problem == "" {
				c.Problem = ReasonNestingTooDeep
			}
			state[name] = true
			readOnly = false
		default:
			path[name] = true
			nestedReadOnly := classifyInto(p.Signature, cat, procs, depth+1, path, map[string]bool{}, map[string]bool{}, c)
			delete(path, name)
			if !nestedReadOnly {
				state[name] = true
				readOnly = false
			}
		}
	}
	return readOnly
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// IsExposed reports whether a procedure is offered to planners as a proc__
// tool: succeeded, not opaque, at least two distinct tools, and read-only
// unless mutating auto-run is on.
func IsExposed(status Status, opaque bool, signature []string, readOnly, allowMutating bool) bool {
	return status == StatusSucceeded && !opaque && len(signature) >= 2 /* signatures are de-duplicated */ && (readOnly || allowMutating)
}

// WithinNames reports whether every signature name is in names: the
// read-only test when names is the set of read-only tool and procedure names.
func WithinNames(signature []string, names map[string]bool) bool {
	for _, n := range signature {
		if !names[n] {
			return false
		}
	}
	return true
}
