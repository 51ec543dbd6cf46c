package procedures

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/procgraph/procgraph/signature"
)

// CanonicalHashOf is the canonical hash of a version's code in dialect
// (signature.AnalyzeCanonical; docs/design.md "The canonical program"),
// with cat's classification deciding which calls are independent reads
// (nil: none). It is what versions are keyed by beside their code hash: a
// capture whose code has the canonical hash of a stored version of its
// procedure is a use of that version.
func CanonicalHashOf(code, dialect string, cat *Catalogue) (string, error) {
	d, err := signature.ParseDialect(dialect)
	if err != nil {
		return "", err
	}
	_, c, err := signature.AnalyzeCanonical(code, d, cat.ReadsOnly)
	if err != nil {
		return "", err
	}
	return c.Hash, nil
}

// ReadsOnly reports whether tool is a catalogue tool that changes no
// state (read_only); a proc__ name, an unknown tool, and any tool of a
// nil catalogue do not.
func (c *Catalogue) ReadsOnly(tool string) bool {
	if c == nil {
		return false
	}
	t, ok := c.Tool(tool)
	return ok && t.ReadOnly
}

// ProgramKey is what a session policy set on a block covers beside its
// exact text (docs/design.md "What an authorization binds to"): for a
// read-only block, its canonical program with its literals lifted
// (Service.lift's rule under cat): the same program whatever values those
// parameters take; for a block that changes state, its canonical program
// as written and its arguments (canonical JSON): the same calls with the
// values the operator saw. "" when the block does not analyse or has no
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
		_, c, err := signature.AnalyzeCanonical(code, d, cat.ReadsOnly)
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
	if c := s.LiftedCanonical(code, dialect, cat); c != "" {
		return readsKey + c
	}
	return ""
}

// readsKey prefixes a read-only block's ProgramKey: its LiftedCanonical.
const readsKey = "reads:"

// LiftedOfKey is the LiftedCanonical a read-only block's ProgramKey holds
// (ok false for another key), so that it is not computed twice.
func LiftedOfKey(key string) (lifted string, ok bool) {
	return strings.CutPrefix(key, readsKey)
}

// LiftedCanonical is the canonical hash of code with its literals lifted
// as a capture lifts them under cat (Service.lift): the hash a capture of
// it stores its version under (Version.CanonicalHash), "" when it does not
// analyse.
func (s *Service) LiftedCanonical(code, dialect string, cat *Catalogue) string {
	d, err := signature.ParseDialect(dialect)
	if err != nil {
		return ""
	}
	_, plan, err := signature.AnalyzeLift(code, d)
	if err != nil {
		return ""
	}
	lifted := code
	if res := s.lift(plan, cat, nil); len(res.Lifted) > 0 {
		lifted = res.Code
	}
	_, c, err := signature.AnalyzeCanonical(lifted, d, cat.ReadsOnly)
	if err != nil {
		return ""
	}
	return c.Hash
}
