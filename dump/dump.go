package dump

import (
	"context"
	"encoding/json"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/binding"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/recording"
)

// Format is the version of the dump format this build writes (docs/dumps.md
// "The dump format"). It reads it, FormatV2 and FormatV1.
const Format = 3

// FormatV2 is the format before versions carried their health: its
// version records have none.
const FormatV2 = 2

// FormatV1 is the first format: its procedure records have no
// search_parts, which the reader derives from the record (SearchParts of
// its signature and summary).
const FormatV1 = 1

// Type names a dump line's record.
type Type string

// The record types, in the order a dump holds their sections: the header,
// the catalogue, every cause, every procedure group (the procedure, then
// its versions, version usage keys, procedure usage keys, cause edges and
// edge usage keys), every decision, every approval (turn), every session
// policy, the trailer. A procedure group ends with its versions'
// recordings when the dump was written with them (DumpOptions.Recordings).
const (
	TypeHeader    Type = "header"
	TypeCatalogue Type = "catalogue"
	TypeCause     Type = "cause"
	TypeProcedure Type = "procedure"
	TypeVersion   Type = "version"
	TypeUsage     Type = "usage"
	TypeEdge      Type = "edge"
	TypeDecision  Type = "decision"
	TypeApproval  Type = "approval"
	TypePolicy    Type = "policy"
	TypeRecording Type = "recording"
	TypeTrailer   Type = "trailer"
)

// The scopes of a usage key: what it was counted on.
const (
	UsageProcedure = "procedure"
	UsageVersion   = "version"
	UsageEdge      = "edge"
)

// Counts is a number of records per type.
type Counts map[Type]int64

// CountTypes are the record types a dump counts, in its section order
// (how an import's summary and audit note list them).
var CountTypes = []Type{TypeCatalogue, TypeCause, TypeProcedure, TypeVersion, TypeUsage, TypeEdge,
	TypeRecording, TypeDecision, TypeApproval, TypePolicy}

// HeaderRecord opens a dump.
type HeaderRecord struct {
	Format           int    `json:"format"`
	Source           string `json:"source"`
	ProcgraphVersion string `json:"procgraph_version"`
	// Counts are the store's counts when the export began: exact for the
	// embedded store (one snapshot); for Neo4j while writers are active the
	// trailer's counts are the ones that hold.
	Counts    Counts    `json:"counts"`
	CreatedAt time.Time `json:"created_at"`
}

// TrailerRecord closes a dump: the records it holds and the SHA-256 of
// every byte before the trailer line, in hex.
type TrailerRecord struct {
	Records int64  `json:"records"`
	Counts  Counts `json:"counts"`
	SHA256  string `json:"sha256"`
}

// CauseRecord is a cause; its counts follow from the edges.
type CauseRecord struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// ProcedureRecord is a procedure as stored, without its kept
// classification (recomputed on import): Current is its current version
// (promotions), Grant its stored grant, Retired its retirement,
// SearchParts the distinct texts of its search document (search.MergeParts
// of every capture's SearchParts, at most search.MaxParts, in order).
type ProcedureRecord struct {
	Name       string                 `json:"name"`
	Signature  []string               `json:"signature"`
	Summary    string                 `json:"summary"`
	Current    string                 `json:"current"`
	Frequency  int64                  `json:"frequency"`
	UseCount   int64                  `json:"use_count"`
	CreatedAt  time.Time              `json:"created_at"`
	UpdatedAt  time.Time              `json:"updated_at"`
	LastUsedAt *time.Time             `json:"last_used_at"`
	Grant      *procedures.Grant      `json:"grant"`
	Retired    *procedures.Retirement `json:"retired"`
	// Demoted is whether the procedure is demoted (health.DemotedAfter);
	// absent (false) in dumps written before demotion.
	Demoted bool `json:"demoted,omitempty"`
	// SearchParts is new in format 2.
	SearchParts []string `json:"search_parts"`
}

// VersionRecord is one version of the procedure whose group it is in.
type VersionRecord struct {
	Procedure   string               `json:"procedure"`
	CodeHash    string               `json:"code_hash"`
	Code        string               `json:"code"`
	Dialect     string               `json:"dialect"`
	Parameters  []string             `json:"parameters"`
	InputSchema map[string]any       `json:"input_schema"`
	Opaque      bool                 `json:"opaque"`
	Warnings    []procedures.Warning `json:"warnings"`
	Summary     string               `json:"summary"`
	Metadata    map[string]any       `json:"metadata"`
	CapturedAt  time.Time            `json:"captured_at"`
	Frequency   int64                `json:"frequency"`
	Status      procedures.Status    `json:"status"`
	// Health is new in format 3 (nil: the version never ran).
	Health *HealthRecord `json:"health,omitempty"`
	// Baseline is the version's drift baseline (procedures.Baseline),
	// optional within format 3: absent (nil) in dumps written before
	// dumps carried it, and then the importing store gives the version its
	// current contracts, as it does a version stored before drift was kept.
	Baseline *procedures.Baseline `json:"baseline,omitempty"`
}

// RecordingRecord is one recording of a version of the procedure whose
// group it is in (only in a dump written with DumpOptions.Recordings):
// its names, time and content hash, and its body as the store keeps it
// (recording.EncodeRecordingBody's JSON, checked on reading with
// recording.RecordingFromBody).
type RecordingRecord struct {
	Procedure   string          `json:"procedure"`
	CodeHash    string          `json:"code_hash"`
	ID          string          `json:"id"`
	RecordedAt  time.Time       `json:"recorded_at"`
	ContentHash string          `json:"content_hash"`
	Body        json.RawMessage `json:"body"`
}

// RecordingRecordOf is r as a dump carries it.
func RecordingRecordOf(r *recording.Recording) (*RecordingRecord, error) {
	body, err := recording.EncodeRecordingBody(r)
	if err != nil {
		return nil, err
	}
	return &RecordingRecord{Procedure: r.Procedure, CodeHash: r.CodeHash, ID: r.ID, RecordedAt: r.RecordedAt,
		ContentHash: r.ContentHash, Body: body}, nil
}

// Recording is the recording r holds, checked (recording.RecordingFromBody,
// and the content hash must be its body's).
func (r *RecordingRecord) Recording() (*recording.Recording, error) {
	rec, err := recording.RecordingFromBody(r.Procedure, r.CodeHash, r.ID, r.RecordedAt, r.Body)
	if err != nil {
		return nil, err
	}
	if rec.ContentHash != r.ContentHash {
		return nil, fault.Errorf(fault.CodeInvalid, "recording %s: its content hash %q is not its body's %s", r.ID, r.ContentHash, rec.ContentHash)
	}
	return rec, nil
}

// DumpOptions says what a dump holds besides the store's knowledge.
type DumpOptions struct {
	// Recordings adds every version's recordings (procgraph export
	// --with-recordings): they hold tool output, so without it a dump
	// carries none (docs/design.md "Verification against recorded tool
	// responses").
	Recordings bool
	// Progress, when set, is called by Write as the dump is written: the
	// records written so far and the total the store counted when it
	// began (Sink.Begin's counts; on Neo4j, read in read-committed pages,
	// the records written may pass it).
	Progress func(done, total int64)
}

// UsageRecord is one usage key counted on a procedure, one of its
// versions (CodeHash) or one of its cause edges (Cause).
type UsageRecord struct {
	Scope     string `json:"scope"`
	Procedure string `json:"procedure"`
	CodeHash  string `json:"code_hash,omitempty"`
	Cause     string `json:"cause,omitempty"`
	Key       string `json:"key"`
}

// EdgeRecord is a cause's edge to a procedure with its frequency.
type EdgeRecord struct {
	Cause     string `json:"cause"`
	Procedure string `json:"procedure"`
	Frequency int64  `json:"frequency"`
}

// Record is one record of a dump body: Type says which field is set.
type Record struct {
	Type      Type
	Catalogue *procedures.Catalogue
	Cause     *CauseRecord
	Procedure *ProcedureRecord
	Version   *VersionRecord
	Usage     *UsageRecord
	Edge      *EdgeRecord
	Decision  *audit.Decision
	Approval  *gate.TurnRecord
	Policy    *PolicyRecord
	Recording *RecordingRecord
	// Keep is, for a recording, the number of recordings its version keeps
	// in the target, the newest (ImportOptions.RecordingsPerVersion; set by
	// Import; not written).
	Keep int `json:"-"`
	// Group is, for a version, usage key or edge, the procedure record of
	// the group it is in (set by Reader; not written): a merge reads
	// the dump's current version from it.
	Group *ProcedureRecord `json:"-"`
}

// PolicyRecord is a session policy with its session.
type PolicyRecord struct {
	SessionID string      `json:"session_id"`
	CodeHash  string      `json:"code_hash"`
	Policy    gate.Choice `json:"policy"`
	Summary   string      `json:"summary"`
	SetBy     string      `json:"set_by"`
	SetAt     time.Time   `json:"set_at"`
	// RequestedBy is the requester the policy is bound to (SessionPolicy);
	// absent from older dumps, whose policies then bind to nobody and never
	// auto-run (fail closed).
	RequestedBy string `json:"requested_by,omitempty"`
	// Binding is what the operator approved (SessionPolicy.Binding); absent
	// from older dumps and from policies stored before bindings, which then
	// apply to nothing.
	Binding *binding.Binding `json:"binding,omitempty"`
}

// PolicyOf is p as a dump record.
func PolicyOf(p gate.SessionPolicy) *PolicyRecord {
	return &PolicyRecord{SessionID: p.SessionID, CodeHash: p.CodeHash, Policy: p.Policy, Summary: p.Summary, SetBy: p.SetBy,
		SetAt: p.SetAt, RequestedBy: p.RequestedBy, Binding: p.Binding}
}

// SessionPolicy is r as a store keeps it.
func (r *PolicyRecord) SessionPolicy() gate.SessionPolicy {
	return gate.SessionPolicy{SessionID: r.SessionID, CodeHash: r.CodeHash, Policy: r.Policy, Summary: r.Summary, SetBy: r.SetBy,
		SetAt: r.SetAt, RequestedBy: r.RequestedBy, Binding: r.Binding}
}

// Sink receives an export: Begin once with the store's counts, then
// every record in dump order.
type Sink interface {
	Begin(counts Counts) error
	Record(r Record) error
}

// LoadMarker is an import in progress, kept in the target store with the
// records it has applied: the dump (its trailer's SHA-256) and the last line
// applied.
type LoadMarker struct {
	DumpID string `json:"dump_id"`
	Line   int64  `json:"line"`
	// Merge says the records are merged into what the store held (docs/dumps.md
	// "Merging"), not loaded into an empty store.
	Merge bool `json:"merge,omitempty"`
}

// Store is a procedures.Store that can enumerate everything it holds and load a
// dump back (procgraph export / import). Both backends implement it.
type Store interface {
	procedures.Store
	Source
	Target
}

// Source is what an export (Write) reads of a store: its name and every
// record it holds.
type Source interface {
	// DumpSource names the backend in a dump's header ("embedded", "neo4j").
	DumpSource() string

	// Dump calls sink.Begin with the store's counts, then sink.Record with
	// every record in dump order (docs/dumps.md), streaming: it never
	// holds the store in memory. The embedded store reads one snapshot;
	// Neo4j reads pages in read-committed transactions. Recordings are
	// dumped only with opts.Recordings. Returns the sink's error as is.
	Dump(ctx context.Context, sink Sink, opts DumpOptions) error
}

// Target is what an import (Import) asks of a store: the catalogue the
// records are admitted under, the import in progress, and the loading.
type Target interface {
	procedures.CatalogueStore

	// Empty reports whether the store holds no procedure, cause, decision
	// or catalogue tool; its tokens and their audit records (kind token)
	// do not count: they are not data a dump carries.
	Empty(ctx context.Context) (bool, error)

	// LoadState returns the import in progress, nil when there is none.
	LoadState(ctx context.Context) (*LoadMarker, error)

	// Load applies recs (validated dump records, in dump order) and sets
	// the marker to m, in one transaction. Records set absolute values
	// (usage keys, counts, timestamps and decision ids as dumped). A batch
	// at or before the marker's line (m.Line not after it) committed with
	// it already: Load then does nothing. With m.Merge they are merged
	// into what the store holds by the rules of docs/dumps.md "Merging" (counts
	// from the union of usage keys, the store's catalogue, grants,
	// promotions and retirements kept, ...), each rule as idempotent.
	// Returns fault.CodeConflict when another import (another DumpID, or the
	// same one in the other mode) is in progress or a merged procedure is
	// stored under another signature, fault.CodeInvalid for a record that refers
	// to something missing.
	Load(ctx context.Context, m LoadMarker, recs []Record) error

	// MergeConflict returns the first of procs (in order) that the store
	// holds under another signature, "" when none: a merge of it would be
	// refused. It writes nothing.
	MergeConflict(ctx context.Context, procs []*ProcedureRecord) (string, error)

	// FinishLoad recomputes every procedure's kept classification and
	// class counts and removes the marker of dumpID. Returns fault.CodeConflict
	// when the marker is another dump's.
	FinishLoad(ctx context.Context, dumpID string) error
}
