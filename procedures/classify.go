package procedures

import (
	"sort"

	"github.com/procgraph/procgraph/audit"
)

// MaxNesting is how deep proc__ references may nest.
const MaxNesting = 4

// Classification is what the current catalogue says about a signature.
type Classification struct {
	// ReadOnly is true iff every tool is known and read-only, recursively
	// through nested procedures, within MaxNesting and without a cycle.
	ReadOnly bool
	// StateChangingTools lists the known tools (and nested procedures) that
	// are not read-only, sorted. A nested procedure that is not read-only
	// only because of its place in a chain (Problem) is not listed: it
	// changes no state.
	StateChangingTools []string
	// ReadOnlyTools lists the known tools (and nested procedures) that are
	// read-only, sorted: the positive list a replay's allow-set is drawn
	// from (replay.AllowSet). A name in none of the three lists (a nested
	// procedure with a Problem) is neither.
	ReadOnlyTools []string
	// UnknownTools lists the names neither in the catalogue nor stored as
	// procedures, sorted.
	UnknownTools []string
	// ExternalAccess is true iff any tool, recursively, has external access.
	ExternalAccess bool
	// Problem is set when nesting is too deep or cyclic, or a nested
	// procedure is retired: ReasonNestingTooDeep, ReasonCycle or
	// ReasonCallsRetired. Such a signature is never read-only, never
	// exposed, and its replay is denied with Problem as the reason.
	Problem string
}

// Classify classifies a signature against the catalogue. Nested proc__
// references are looked up in procs (the caller prefetches them); a missing
// one is unknown. Unknown means not read-only: classification fails closed.
// It is the one implementation of docs/design.md's read-only rule: stores keep
// what it computed (see Reclassify) and never derive read-only themselves.
func Classify(signature []string, cat *Catalogue, procs map[string]*Procedure) Classification {
	var c Classification
	state := map[string]bool{}
	unknown := map[string]bool{}
	ro := map[string]bool{}
	v := classifyInto(signature, cat, procs, 0, map[string]bool{}, names{state, unknown, ro}, &c)
	c.ReadOnly = v == verdictReadOnly
	c.StateChangingTools = sortedKeys(state)
	c.ReadOnlyTools = sortedKeys(ro)
	c.UnknownTools = sortedKeys(unknown)
	return c
}

// verdict is the read-only verdict of a (nested) signature.
type verdict int

const (
	verdictReadOnly   verdict = iota
	verdictStructural         // read-only but for a cycle or a nesting too deep
	verdictNot                // a state-changing or unknown name somewhere
)

// names collects a signature's names by kind while it is classified.
type names struct{ state, unknown, readOnly map[string]bool }

func classifyInto(signature []string, cat *Catalogue, procs map[string]*Procedure, depth int,
	path map[string]bool, n names, c *Classification) verdict {
	out := verdictReadOnly
	worse := func(v verdict) {
		if v > out {
			out = v
		}
	}
	for _, name := range signature {
		if !IsProcName(name) {
			t, ok := cat.Tool(name)
			switch {
			case !ok:
				n.unknown[name] = true
				worse(verdictNot)
			case !t.ReadOnly:
				n.state[name] = true
				worse(verdictNot)
			default:
				n.readOnly[name] = true
			}
			if ok && t.ExternalAccess {
				c.ExternalAccess = true
			}
			continue
		}
		p, ok := procs[name]
		switch {
		case !ok:
			n.unknown[name] = true
			worse(verdictNot)
		case path[name]:
			c.Problem = audit.ReasonCycle
			worse(verdictStructural)
		case depth+1 > MaxNesting:
			if c.Problem == "" {
				c.Problem = audit.ReasonNestingTooDeep
			}
			worse(verdictStructural)
		case p.Retired != nil:
			// A retired procedure refuses every replay, so a call to it
			// cannot succeed: the caller is not offered to planners.
			if c.Problem == "" {
				c.Problem = audit.ReasonCallsRetired
			}
			worse(verdictStructural)
		default:
			path[name] = true
			nested := classifyInto(p.Signature, cat, procs, depth+1, path, names{map[string]bool{}, map[string]bool{}, map[string]bool{}}, c)
			delete(path, name)
			switch nested {
			case verdictNot:
				n.state[name] = true
			case verdictReadOnly:
				n.readOnly[name] = true
			}
			worse(nested)
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
