package procedures

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/usage"
)

var (
	// reasonShape is a reason: a short snake_case word, never a value.
	reasonShape = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	// codeHashShape is a code hash (hex sha256) or a catalogue revision.
	codeHashShape = regexp.MustCompile(`^(sha256:)?[0-9a-f]{64}$`)
	// schemaHashShape is a "sha256:" hash (schemaHash, a contract's
	// hashes).
	schemaHashShape = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	// idShape is a decision id (NewDecisionID).
	idShape = regexp.MustCompile(`^pgd_[0-9a-f]{32}$`)
	// tokenShape is a bearer credential: procgraph's own tokens
	// ("pgt_" and 43 base64url characters, `procgraph token create`) and
	// anything presented as "Bearer X".
	tokenShape = regexp.MustCompile(`pgt_[A-Za-z0-9_-]{20,}|(?i:bearer)\s+[A-Za-z0-9._~+/=-]{8,}`)
)

// CheckAudit enforces docs/design.md's audit rule on a record: it says who
// decided what about which code and why, and never holds argument values,
// code text, tokens or results. Decision has no field for any of those;
// this check keeps the fields it has to their shapes, so that no value can
// travel in one:
//   - kind, outcome, phase and a run's result are known values; reason is
//     a snake_case word;
//   - the code hash is a hex sha256 (or a catalogue revision), the id a
//     decision id;
//   - the procedure and each allowed tool are one name: no white space, no
//     control character, at most fields.MaxKeyBytes;
//   - actor and suggestion are one line of bounded text, the session a
//     session id (CheckSessionID); the note (an operator's reason, or who
//     reviewed) is bounded UTF-8;
//   - no field holds a token.
//
// A record whose text holds a token or whose note is too long is
// fault.CodeInvalid (that text comes from a caller); any other violation is
// fault.CodeInternal, since only a bug builds one.
// Either way the record is not stored and nothing it would allow runs.
func CheckAudit(d audit.Decision) error {
	switch {
	case !d.Kind.Valid():
		return auditBug("kind %q is not a decision kind", d.Kind)
	case !d.Outcome.Valid():
		return auditBug("outcome %q is not an outcome", d.Outcome)
	case d.Phase != "" && !d.Phase.Valid():
		return auditBug("phase %q is not a phase", d.Phase)
	case !reasonShape.MatchString(d.Reason):
		return auditBug("the reason is not a reason word")
	case d.CodeHash != "" && !codeHashShape.MatchString(d.CodeHash):
		return auditBug("the code hash is not a hash")
	case !idShape.MatchString(d.ID):
		return auditBug("the id is not a decision id")
	case d.Procedure != "" && !isName(d.Procedure):
		return auditBug("the procedure is not a name")
	case d.Result != "" && !slices.Contains(health.RunResults, d.Result):
		return auditBug("result %q is not a run's result", d.Result)
	}
	for _, t := range d.AllowedTools {
		if !isName(t) {
			return auditBug("an allowed tool is not a name")
		}
	}
	if len(d.Actor) > fields.MaxKeyBytes || !fields.IsLine(d.Actor) {
		return auditBug("the actor is not one line of at most %d bytes", fields.MaxKeyBytes)
	}
	if d.Session != "" && usage.CheckSessionID(d.Session) != nil {
		return auditBug("the session is not a session id")
	}
	if len(d.Suggestion) > fields.MaxSuggestionBytes || !fields.IsLine(d.Suggestion) {
		return auditBug("the suggestion is not one line of at most %d bytes", fields.MaxSuggestionBytes)
	}
	if len(d.Note) > fields.MaxNoteBytes || !utf8.ValidString(d.Note) {
		return fault.Errorf(fault.CodeInvalid, "the audit record's note (the reason) must be UTF-8 of at most %d bytes", fields.MaxNoteBytes).
			WithDetails("field", "reason")
	}
	for _, f := range []struct{ field, value string }{
		{"procedure", d.Procedure}, {"actor", d.Actor}, {"session", d.Session}, {"reason", d.Note}, {"suggestion", d.Suggestion},
	} {
		if tokenShape.MatchString(f.value) {
			return fault.Errorf(fault.CodeInvalid, "the audit record's %s would hold a token, and tokens are never recorded", f.field).
				WithDetails("field", f.field)
		}
	}
	return nil
}

func auditBug(format string, args ...any) error {
	return fault.Errorf(fault.CodeInternal, "the decision record breaks the audit rule: "+format, args...)
}

// isName reports whether s is one bounded name: a line (fields.IsLine)
// without white space.
func isName(s string) bool {
	return s != "" && len(s) <= fields.MaxKeyBytes && fields.IsLine(s) && strings.IndexFunc(s, unicode.IsSpace) < 0
}
