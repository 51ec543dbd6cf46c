package procedures

import "github.com/procgraph/procgraph/signature"

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
