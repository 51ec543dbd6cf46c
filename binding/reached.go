package binding

import (
	"fmt"
	"strings"
)

// Reached is one proc__ a reviewed block may reach, directly or through
// other procedures (docs/design.md "What the operator sees is what runs"):
// the version an authorization of the block binds to (Binding.Nested; procedures.Service.Reach finds them), with
// its code. An operator's approval covers exactly these versions: another
// current version is refused at run time (nested_changed).
type Reached struct {
	Name string `json:"name"`
	// Depth is its nesting level: 1 when the block calls it, 2 when a
	// procedure of level 1 does, and so on (at most procedures.MaxNesting + 1).
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
	case r.CodeHash == NestedAbsent:
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
