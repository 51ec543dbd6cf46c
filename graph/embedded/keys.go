package embedded

import (
	"bytes"
	"encoding/binary"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The buckets. Composite keys join their parts with a 0 byte; names, causes,
// code hashes and tools never contain one (Capture rejects them), and a
// usage key, which may, is always the last part.
var (
	bMeta        = []byte("meta")                   // "schema" → version, "count" → procedures (u64)
	bProcs       = []byte("procedures")             // name → procRecord (JSON)
	bVersions    = []byte("versions")               // name 0 hash → versionRecord (JSON)
	bKeysProc    = []byte("usage_procedure")        // name 0 key → ∅
	bKeysVersion = []byte("usage_version")          // name 0 hash 0 key → ∅
	bKeysEdge    = []byte("usage_edge")             // cause 0 name 0 key → ∅
	bCauses      = []byte("causes")                 // cause → causeRecord (JSON)
	bEdgesPC     = []byte("edges_by_procedure")     // name 0 cause → frequency (u64)
	bEdgesCP     = []byte("edges_by_cause")         // cause 0 name → frequency (u64)
	bGrants      = []byte("grants")                 // name → Grant (JSON)
	bDecisions   = []byte("decisions")              // at (u64) id → Decision (JSON)
	bDecisionIDs = []byte("decision_ids")           // id → at (u64)
	bDecByProc   = []byte("decisions_by_procedure") // name 0 at id → ∅
	bDecByField  = []byte("decisions_by_field")     // tag value 0 at id → ∅ (decisionIndexes)
	bCatalogue   = []byte("catalogue")              // "current" → catalogueRecord (JSON)
	bRank        = []byte("rank")                   // ^frequency ^last_used name → summary
	bRankByName  = []byte("rank_by_name")           // name → rank key
	bToolProcs   = []byte("tool_procedures")        // tool 0 name → ∅
	bRefs        = []byte("references")             // referenced name 0 referrer → ∅
	bClasses     = []byte("classes")                // classKey → procedures of that class (u64)
	bToolClasses = []byte("tool_classes")           // tool 0 classKey → procedures of that class calling it (u64)
	bTurns       = []byte("turns")                  // turn id → gate.TurnRecord (JSON)
	bPending     = []byte("turns_pending")          // turn id → deadline (u64 ms) requester, while pending
	bPolicies    = []byte("session_policies")       // session 0 code hash → gate.SessionPolicy (JSON)
	bBaselines   = []byte("version_baselines")      // name 0 hash → the version's baseline keys, "\n" between (putVersion)
	bHealth      = []byte("version_health")         // name 0 hash → the version's health vector, varints (health.go)
	bRecordings  = []byte("recordings")             // name 0 hash 0 id → recorded_at (u64 ms) body (recordings.go)
	bCanonical   = []byte("version_canonical")      // name 0 canonical hash → the code hash of the first version of that program (putVersion)
	bTokens      = []byte("tokens")                 // holder → tokenRecord (JSON) (tokens.go)
	bTokenHashes = []byte("token_hashes")           // sha256 hex → holder
	bTokenRevs   = []byte("token_revisions")        // revision (u64) → holder: each record under its last change's revision
	bUnindexed   = []byte("decisions_unindexed")    // at (u64) id → ∅: audit records whose index entries are still to write (decindex.go)
)

var allBuckets = [][]byte{
	bMeta, bProcs, bVersions, bKeysProc, bKeysVersion, bKeysEdge, bCauses, bEdgesPC, bEdgesCP,
	bGrants, bDecisions, bDecisionIDs, bDecByProc, bDecByField, bCatalogue, bRank, bRankByName, bToolProcs, bRefs, bClasses,
	bToolClasses, bTurns, bPending, bPolicies, bSearch, bBaselines, bHealth, bRecordings, bCanonical,
	bTokens, bTokenHashes, bTokenRevs, bUnindexed,
}

var (
	metaSchema = []byte("schema")
	metaCount  = []byte("count")
	catKey     = []byte("current")
	// metaBaselines is set once every version stored before drift was kept
	// has its baseline (upgradeBaselines).
	metaBaselines = []byte("baselines")
	// metaCanonical is set while every version has its canonical hash
	// (upgradeCanonical); putVersion clears it when it stores one without.
	metaCanonical = []byte("canonical")
	// metaTokenRevision is the store's token revision (u64), bumped by every
	// change of a token (tokens.go).
	metaTokenRevision = []byte("token_revision")
	// metaAuthRevision is the store's authorization revision (u64), bumped
	// by every write that can change what a grant or a session policy
	// decides (authrev.go).
	metaAuthRevision = []byte("auth_revision")
	// metaDecisionIndex is set once every audit record stored before
	// bDecByField has its entries (upgradeDecisionIndex).
	metaDecisionIndex = []byte("decision_index")
)

// schemaVersion is the layout this package reads and writes. Schema
// schemaUnclassified (no kept classification, no class counts),
// schemaNoToolCounts (no per-tool class counts, bToolClasses) and
// schemaIndexedInline (every audit record's index entries written with it,
// no bUnindexed) are migrated to it when opened. A procgraph that reads
// schemaIndexedInline refuses this one: it would not list the records of
// bUnindexed under a filter.
const (
	schemaVersion       = "4"
	schemaIndexedInline = "3"
	schemaNoToolCounts  = "2"
	schemaUnclassified  = "1"
)

// key joins parts with 0 bytes.
func key(parts ...string) []byte {
	n := len(parts) - 1
	for _, p := range parts {
		n += len(p)
	}
	b := make([]byte, 0, n)
	for i, p := range parts {
		if i > 0 {
			b = append(b, 0)
		}
		b = append(b, p...)
	}
	return b
}

// prefix returns key(parts...) followed by a 0 byte: every key under it.
func prefix(parts ...string) []byte { return append(key(parts...), 0) }

// scanPrefix calls fn with the rest of every key under p and its value.
func scanPrefix(b *bolt.Bucket, p []byte, fn func(rest, v []byte) error) error {
	c := b.Cursor()
	for k, v := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, v = c.Next() {
		if err := fn(k[len(p):], v); err != nil {
			return err
		}
	}
	return nil
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func getU64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// ms is t in Unix milliseconds: stores keep times at millisecond precision.
func ms(t time.Time) int64 { return t.UnixMilli() }

// fromMs is the UTC time of Unix milliseconds.
func fromMs(v int64) time.Time { return time.UnixMilli(v).UTC() }

// norm is t as stored: UTC, truncated to milliseconds.
func norm(t time.Time) time.Time { return fromMs(ms(t)) }

// orderedMs encodes Unix milliseconds so that byte order is time order.
func orderedMs(v int64) uint64 { return uint64(v) ^ (1 << 63) }

// rankKey orders procedures by frequency desc, last used desc (never used
// last), then name asc.
func rankKey(freq int64, lastUsed *int64, name string) []byte {
	var lu uint64 // never used: 0, inverted to the largest value
	if lastUsed != nil {
		lu = orderedMs(*lastUsed)
	}
	b := make([]byte, 0, 16+len(name))
	b = binary.BigEndian.AppendUint64(b, ^uint64(freq))
	b = binary.BigEndian.AppendUint64(b, ^lu)
	return append(b, name...)
}

// rankFields decodes the frequency and the last use (nil: never used) of
// a rank key.
func rankFields(k []byte) (freq int64, lastUsed *int64) {
	freq = int64(^binary.BigEndian.Uint64(k[0:8]))
	if lu := ^binary.BigEndian.Uint64(k[8:16]); lu != 0 {
		v := int64(lu ^ (1 << 63))
		lastUsed = &v
	}
	return freq, lastUsed
}

// rankName is the procedure name in a rank key.
func rankName(k []byte) string { return string(rankNameBytes(k)) }

// rankNameBytes is rankName without a copy.
func rankNameBytes(k []byte) []byte { return k[16:] }

// decisionKey orders decisions by time, then id.
func decisionKey(at time.Time, id string) []byte {
	return append(binary.BigEndian.AppendUint64(nil, orderedMs(ms(at))), id...)
}
