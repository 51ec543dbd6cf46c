package procedures

import (
	"fmt"
	"strings"
)

// DumpCountTypes are the record types a dump counts, in its section order
// (how an import's summary and audit note list them).
var DumpCountTypes = []DumpType{DumpCatalogue, DumpCause, DumpProcedure, DumpVersion, DumpUsage, DumpEdge,
	DumpDecision, DumpApproval, DumpPolicy}

// StoreDecision is the audit record of an operator loading a whole store
// offline (kind KindStore; reason ReasonImported, ReasonMerged or
// ReasonRestored), by actor, with note saying what was loaded. Like every
// record it names no value and no code: the note holds counts, the dump's
// checksum and format, or a size (ImportNote, RestoreNote).
func StoreDecision(reason, actor, note string) Decision {
	return Decision{Kind: KindStore, Outcome: Allowed, Reason: reason, Actor: actor, Note: note}
}

// ImportNote is the note of an import's or merge's audit record: the
// dump's checksum and format, what this run applied of what the dump holds,
// by type, and the line it resumed after.
func ImportNote(sum ImportSummary, applied DumpCounts) string {
	var b strings.Builder
	fmt.Fprintf(&b, "dump sha256 %s, format %d; applied", sum.Trailer.SHA256, sum.Header.Format)
	for i, t := range DumpCountTypes {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " %s %d of %d", t, applied[t], sum.Trailer.Counts[t])
	}
	if sum.Resumed > 0 {
		fmt.Fprintf(&b, "; resumed after line %d", sum.Resumed)
	}
	return b.String()
}

// TrustNote is the note of the audit record (reason
// ReasonAuthorizationsTrusted) of an import that kept the dump's
// authorizations: what was kept, never which.
const TrustNote = "the dump's session policies and durable grants were kept as dumped (--trust-authorizations)"

// RestoreNote is the note of a restore's audit record.
func RestoreNote(bytes int64) string {
	return fmt.Sprintf("store file restored from a backup of %d bytes", bytes)
}
