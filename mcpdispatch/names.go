package mcpdispatch

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/procedures"
)

// maxToolName is the longest catalogue tool name.
const maxToolName = fields.MaxToolNameBytes

// longHashLen is the number of hex digits of the hash that ends a name
// too long to keep whole: 80 bits, as a procedure's hashed name.
const longHashLen = 20

// longMarker separates a shortened name's readable part from its hash.
const longMarker = "___"

// ToolName is the catalogue name of the tool named tool on a server whose
// prefix is prefix (its key unless the upstreams file sets one; "" for the
// unnamed server of the --upstream-* flags and for "prefix": ""):
//
//   - "PREFIX__TOOL", or "TOOL" when prefix is "";
//   - every character that is not an ASCII letter, digit or '_' becomes
//     '_' (one per character, so "get-sum" is "get_sum" and "über" is
//     "_ber"); a name that starts with a digit gets a leading '_';
//   - a name longer than 128 characters keeps its first 105, then "___"
//     and the first 20 hex digits of the SHA-256 of prefix, a NUL byte and
//     tool (so two long names that map alike still differ).
//
// The name depends on prefix and tool only, never on the other tools or
// servers configured. Names that map alike are caught where a catalogue
// is built (CatalogueOf), never resolved by order. An empty tool name, and
// a name that starts with proc__ (the procedures' prefix), are errors.
func ToolName(prefix, tool string) (string, error) {
	if tool == "" {
		// An empty upstream_name means the catalogue name: it could not be
		// sent as it is.
		return "", fmt.Errorf("the tool has no name")
	}
	raw := tool
	if prefix != "" {
		raw = prefix + "__" + tool
	}
	var b strings.Builder
	for i, r := range raw {
		if i == 0 && r >= '0' && r <= '9' {
			b.WriteByte('_')
		}
		if r < 0x80 && (r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := b.String()
	if len(name) > maxToolName {
		sum := sha256.Sum256([]byte(prefix + "\x00" + tool))
		name = name[:maxToolName-len(longMarker)-longHashLen] + longMarker + hex.EncodeToString(sum[:])[:longHashLen]
	}
	if procedures.IsProcName(name) {
		return "", fmt.Errorf("its catalogue name %q starts with %q, which is reserved for procedures", name, procedures.ProcPrefix)
	}
	return name, nil
}
