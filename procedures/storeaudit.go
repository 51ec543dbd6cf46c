package procedures

import "fmt"

// StoreDecision is the audit record of an operator loading a whole store
// offline (kind KindStore; reason ReasonImported, ReasonMerged or
// ReasonRestored), by actor, with note saying what was loaded. Like every
// record it names no value and no code: the note holds counts, the dump's
// checksum and format, or a size (ImportNote, RestoreNote).
func StoreDecision(reason, actor, note string) Decision {
	return Decision{Kind: KindStore, Outcome: Allowed, Reason: reason, Actor: actor, Note: note}
}

// RestoreNote is the note of a restore's audit record.
func RestoreNote(bytes int64) string {
	return fmt.Sprintf("store file restored from a backup of %d bytes", bytes)
}
