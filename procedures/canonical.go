package procedures

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/procgraph/procgraph/signature"
)

// CanonicalHashOf is the canonical hash of a version's code in dialect up
// to its parameters' names (signature.AnalyzeCanonicalParams; docs/design.md
// "The canonical program"), with cat's classification deciding which calls
// are independent reads (nil: none). It is what versions are keyed by
// beside their code hash: a capture whose (lifted) code has the canonical
// hash of a stored version of its procedure is a use of that version,
// which keeps the code, and so the parameter names, it was first captured
// with (ADR 0048).
func CanonicalHashOf(code, dialect string, cat *Catalogue) (string, error) {
	d, err := signature.ParseDialect(dialect)
	if err != nil {
		return "", err
	}
	_, c, _, err := signature.AnalyzeCanonicalParams(code, d, cat.readsOnly)
	if err != nil {
		return "", err
	}
	return c.Hash, nil
}

// canonicalHashOfPlan is CanonicalHashOf of plan's code as written, made
// from the plan's own analysis (the code is not parsed again).
func canonicalHashOfPlan(plan *signature.LiftPlan, cat *Catalogue) string {
	c, _ := plan.CanonicalParams(cat.readsOnly)
	return c.Hash
}

// readsOnly reports whether tool is a catalogue tool that changes no
// state (read_only); a proc__ name, an unknown tool, and any tool of a
// nil catalogue do not.
func (c *Catalogue) readsOnly(tool string) bool {
	if c == nil {
		return false
	}
	t, ok := c.Tool(tool)
	return ok && t.ReadOnly
}

// ProgramKey is what a session policy set on a block covers beside its
// exact text (docs/design.md "What an authorization binds to"): for a
// read-only block, its canonical program with its literals lifted
// (Service.lift's rule under cat) up to its parameters' names
// (InlinedProgramOf): the same program whatever values those parameters
// take and whatever they are named; for a block that changes state, its
// canonical program as written and its arguments (canonical JSON): the
// same calls with the values the operator saw. "" when the block does not analyse or has no
// catalogue to be lifted and classified with: it is then covered by its
// exact text only.
func (s *Service) ProgramKey(code, dialect string, cat *Catalogue, readOnly bool, args map[string]any) string {
	if cat == nil {
		return ""
	}
	d, err := signature.ParseDialect(dialect)
	if err != nil {
		return ""
	}
	if !readOnly {
		_, c, err := signature.AnalyzeCanonical(code, d, cat.readsOnly)
		if err != nil {
			return ""
		}
		b, err := json.Marshal(args) // map keys sorted: canonical
		if err != nil {
			return ""
		}
		sum := sha256.Sum256(append([]byte(c.Hash+"\n"), b...))
		return "writes:" + hex.EncodeToString(sum[:])
	}
	if c := s.InlinedProgramOf(code, dialect, cat).Hash; c != "" {
		return readsKey + c
	}
	return ""
}

// readsKey prefixes a read-only block's ProgramKey: its InlinedProgramOf.
const readsKey = "reads:"

// LiftedProgram is a block's program with its literals lifted as a
// capture lifts them: its canonical hash up to parameter names (the hash
// a capture of it stores its version under, Version.CanonicalHash), each
// parameter's canonical name (Params: the lifted code's parameters,
// lifted or not), and the value the block gives each lifted one (Values:
// the literal it lifted).
type LiftedProgram struct {
	Hash   string
	Params map[string]string
	Values map[string]any
}

// LiftedProgramOf is code's LiftedProgram under cat; its Hash is "" when
// code does not analyse.
func (s *Service) LiftedProgramOf(code, dialect string, cat *Catalogue) LiftedProgram {
	d, err := signature.ParseDialect(dialect)
	if err != nil {
		return LiftedProgram{}
	}
	_, plan, err := signature.AnalyzeLift(code, d)
	if err != nil {
		return LiftedProgram{}
	}
	lifted := code
	var values map[string]any
	if res := s.lift(plan, cat, nil); len(res.Lifted) > 0 {
		lifted, values = res.Code, res.Examples
	}
	_, c, params, err := signature.AnalyzeCanonicalParams(lifted, d, cat.readsOnly)
	if err != nil {
		return LiftedProgram{}
	}
	return LiftedProgram{Hash: c.Hash, Params: params, Values: values}
}

// InlinedProgramOf is code's canonical program (its literal bindings
// printed as the literal at their uses) lifted under cat: every literal
// argument lifted is a parameter of its keyword and value, whether the
// block bound it to a name first or wrote it inline, so that both texts
// have one LiftedProgram (its Params are the canonical program's
// parameters: code's own keep their names). Its Hash is "" when code does
// not analyse.
func (s *Service) InlinedProgramOf(code, dialect string, cat *Catalogue) LiftedProgram {
	d, err := signature.ParseDialect(dialect)
	if err != nil {
		return LiftedProgram{}
	}
	_, c, err := signature.AnalyzeCanonical(code, d, cat.readsOnly)
	if err != nil {
		return LiftedProgram{}
	}
	return s.LiftedProgramOf(c.Program, string(signature.Starlark), cat)
}

// Arguments are the arguments a call of a program whose parameters are
// named to (another text of this one: the same Hash) takes for the values
// this block gives its parameters: its lifted literals, else args (the
// block's own arguments). ok is false when to has a parameter this
// program has no counterpart with a value for.
func (l LiftedProgram) Arguments(to map[string]string, args map[string]any) (map[string]any, bool) {
	byCanonical := make(map[string]string, len(l.Params))
	for p, c := range l.Params {
		if c != "" {
			byCanonical[c] = p
		}
	}
	out := make(map[string]any, len(to))
	for p, c := range to {
		mine, ok := byCanonical[c]
		if !ok || c == "" {
			return nil, false
		}
		v, ok := l.Values[mine]
		if !ok {
			v, ok = args[mine]
		}
		if !ok {
			return nil, false
		}
		out[p] = v
	}
	return out, true
}
