package procedures

import (
	"context"
	"errors"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/recording"
)

// Store keeps the procedure graph: one interface per area, composed (as
// openfga composes its datastore), so that a caller can ask for the area it
// uses. Every method is atomic: it either fully happens or changes
// nothing. Implementations live under graph/ and pass the conformance
// suite graph/storetest. Every method may also return
// fault.CodeUnavailable (the backend cannot be reached; nothing was
// written) and fault.CodeInternal.
type Store interface {
	ProcedureStore
	CauseStore
	CatalogueStore
	GrantStore
	DecisionStore
	RunStore
	DriftStore

	// Ping checks that the backend answers.
	Ping(ctx context.Context) error

	// Close releases the backend.
	Close() error
}

// ProcedureStore keeps procedures and their versions: captures, reads, Find,
// promotion and retirement. Every method is atomic, and may also return
// fault.CodeUnavailable and fault.CodeInternal (see Store).
type ProcedureStore interface {
	// Capture records one capture in one transaction: it upserts the
	// procedure by name, the version by code hash, the cause and its edge,
	// and counts the usage key (see CaptureInput). Returns fault.CodeInvalid for
	// an input that breaks the rules documented on CaptureInput.
	Capture(ctx context.Context, in CaptureInput) (CaptureResult, error)

	// Get returns the procedure named name with its current version, causes
	// and stored grant. Returns fault.CodeNotFound.
	Get(ctx context.Context, name string) (*Procedure, error)

	// GetMany returns the procedures among names that exist, by name.
	GetMany(ctx context.Context, names []string) (map[string]*Procedure, error)

	// ReferencedProcedures returns every stored procedure whose name appears
	// in some procedure's signature (a nested proc__ reference).
	ReferencedProcedures(ctx context.Context) ([]*Procedure, error)

	// Find returns the page of procedures matching q in the order frequency
	// desc, last_used_at desc (never used last), name asc, and the total
	// number matching before Limit and Offset. Summary filters are decided
	// by q.Match on each procedure's Class, whose classification the store
	// keeps as Reclassify computed it: on a new procedure (it and its
	// Affected callers) and on a catalogue change (the Affected callers of
	// the tools that changed), in the same transaction. With q.Search, only
	// procedures whose search document (SearchParts of their captures,
	// indexed in the same write path) matches any term or a tool term of
	// the stored catalogue (search.Tools of q.Search, read at query time),
	// among the search.MaxHits best by text relevance, after the other
	// filters, in search.RankHits order with Score set. Returns fault.CodeInvalid when
	// q.Validate does.
	Find(ctx context.Context, q Query) ([]*Procedure, int, error)

	// Versions returns the versions of a procedure, oldest first, with
	// Current set on the current one. Returns fault.CodeNotFound.
	Versions(ctx context.Context, name string) ([]Version, error)

	// Version returns one version of a procedure, with its code. Returns
	// fault.CodeNotFound for an unknown procedure or code hash.
	Version(ctx context.Context, name, codeHash string) (*Version, error)

	// Promote makes the version codeHash current and appends d, in one
	// transaction. Returns fault.CodeNotFound for an unknown procedure or version,
	// fault.CodeConflict when that version did not succeed.
	Promote(ctx context.Context, name, codeHash string, d audit.Decision) (*Procedure, error)

	// SetRetired stores r as the procedure's retirement (nil brings it
	// back) and appends d, in one transaction; the procedure's Class follows
	// (Class.Retired), and so do its Affected callers' classifications
	// (Problem ReasonCallsRetired). Returns fault.CodeNotFound.
	SetRetired(ctx context.Context, name string, r *Retirement, d audit.Decision) (*Procedure, error)
}

// CauseStore reads the causes procedures were captured for. Every method is
// atomic, and may also return fault.CodeUnavailable and fault.CodeInternal
// (see Store).
type CauseStore interface {
	// Causes returns every cause with its number of procedures and the sum
	// of its edge frequencies, by name.
	Causes(ctx context.Context) ([]Cause, error)

	// Cause returns one cause and its procedures (edge frequency desc, then
	// name). Returns fault.CodeNotFound.
	Cause(ctx context.Context, name string) (*Cause, []CauseProcedure, error)
}

// CatalogueStore keeps the tool catalogue. Every method is atomic, and may
// also return fault.CodeUnavailable and fault.CodeInternal (see Store).
type CatalogueStore interface {
	// Catalogue returns the stored tool catalogue; an empty one (with the
	// revision of no tools) when none was ever put.
	Catalogue(ctx context.Context) (*Catalogue, error)

	// PutCatalogue replaces the stored catalogue.
	PutCatalogue(ctx context.Context, c *Catalogue) error
}

// GrantStore keeps procedures' durable grants (set_procedure_auto_run) and
// the store's authorization revision.
// Every method is atomic, and may also return fault.CodeUnavailable and
// fault.CodeInternal (see Store).
type GrantStore interface {
	// SetGrant stores g as the procedure's grant (nil revokes it) and appends
	// d, in one transaction, only if expectHash is still the current code
	// hash and cat (nil: not checked), the catalogue the change was
	// prepared under, is still the stored one; the stored grant's CodeHash
	// is expectHash. Returns fault.CodeNotFound, CatalogueChanged when cat
	// is no longer the stored catalogue, or fault.CodeConflict (with
	// details reason "code_changed") when the current hash is no longer
	// expectHash; nothing is written then.
	SetGrant(ctx context.Context, name string, g *Grant, expectHash string, cat *Catalogue, d audit.Decision) (*Procedure, error)

	// Granted returns every procedure whose stored grant is Held, by name,
	// as Get returns them. It reads those procedures only, not every one.
	Granted(ctx context.Context) ([]*Procedure, error)

	// AuthRevision returns the store's authorization revision, one read of
	// one value (0 before it first moves). Every write that can change what
	// a grant or a session policy decides moves it in its own transaction:
	// SetGrant, gate.TurnStore's PutPolicy and DeletePolicies, Promote,
	// SetRetired, LiftDemotion, PutCatalogue, Rebaseline, a Capture that
	// creates a procedure or changes its current version or that
	// version's status, a use or run that demotes (RecordUse, RecordRun,
	// FinishTurn), and each batch of an import (dump.Store's Load). Other
	// writes leave it: counting uses, appending decisions, turns.
	AuthRevision(ctx context.Context) (uint64, error)
}

// DecisionStore keeps the audit log: decisions and the results of the runs
// they allowed. Every method is atomic, and may also return
// fault.CodeUnavailable and fault.CodeInternal (see Store).
type DecisionStore interface {
	// AppendDecision appends an audit record. Appending the same record
	// again changes nothing (writes may be retried); another record under a
	// known id is fault.CodeConflict. Returns fault.CodeInvalid for a record without id,
	// kind or time.
	AppendDecision(ctx context.Context, d audit.Decision) error

	// SetDecisionResult records result (RunResults) as the result of the
	// run the decision id allowed (Decision.Result), beside the record.
	// Setting the same result again changes nothing (writes may be
	// retried); another result than the one set is fault.CodeConflict.
	// Returns fault.CodeNotFound for an unknown id (a record pruned
	// meanwhile), fault.CodeInvalid for a result that is not one.
	SetDecisionResult(ctx context.Context, id, result string) error

	// RecordRun commits what one run left (RunRecord), in one
	// transaction: it appends rr.Decisions (each with its result), sets
	// rr.Results on records appended before, and counts rr.Uses in order
	// as RecordUse would, returning their UseResults in that order (a use
	// whose procedure or version is unknown writes nothing: its result has
	// no Procedure). Nothing is written on an error: fault.CodeInvalid (a
	// record, result or use the other methods refuse), fault.CodeConflict
	// (another record under a known id, another result than the one set),
	// fault.CodeNotFound (a result for an unknown record).
	RecordRun(ctx context.Context, rr RunRecord) ([]UseResult, error)

	// ListDecisions returns audit records matching f, newest first (by time,
	// then id), from just after f.Before when set. Returns fault.CodeInvalid for a
	// negative limit or a Before that is no stored decision's id.
	ListDecisions(ctx context.Context, f audit.DecisionFilter) ([]audit.Decision, error)
}

// RunStore keeps what runs leave on a procedure: uses and health, demotion,
// recordings and verifications. Every method is atomic, and may also return
// fault.CodeUnavailable and fault.CodeInternal (see Store).
type RunStore interface {
	// RecordUse counts a use of an existing procedure: a capture that was a
	// single proc__ call, or a successful replay (see UseInput). Returns
	// fault.CodeNotFound when the procedure (or the named version) does not exist.
	RecordUse(ctx context.Context, in UseInput) (UseResult, error)

	// LiftDemotion lifts the procedure's demotion (Procedure.Demoted),
	// starts its current version's demotion streak again (StreakReset) and
	// appends in.Decision, in one transaction; its Class follows. It writes
	// nothing and returns fault.CodeConflict, details reason
	// reasonNotDemoted, when the procedure is not demoted, or when
	// in.CodeHash (when set) is not its current version or in.Revision
	// (when set) not the stored catalogue's revision (reason
	// ReasonCatalogueChanged for those two). Returns fault.CodeNotFound.
	LiftDemotion(ctx context.Context, in LiftInput) (*Procedure, error)

	// Recordings returns the page [offset, offset+limit) (limit 0: to the
	// end) of the recordings of the version codeHash of the procedure name
	// (of all its versions when codeHash is ""), newest first (recorded_at,
	// then id), whatever the number of other versions', and how many there
	// are: only the page's bodies are read. Returns fault.CodeNotFound for
	// an unknown procedure, fault.CodeInvalid for a negative limit or
	// offset.
	Recordings(ctx context.Context, name, codeHash string, limit, offset int) ([]recording.Recording, int, error)

	// DeleteRecordings deletes the recordings of the procedure name (every
	// procedure's when name is "") and appends d when it is not nil, in one
	// transaction, returning how many it deleted. Returns
	// fault.CodeNotFound for an unknown procedure.
	DeleteRecordings(ctx context.Context, name string, d *audit.Decision) (int, error)

	// SetVerification keeps v as the last verification of the version
	// codeHash of name, in one write (a verification cut short keeps the
	// previous one). Returns fault.CodeNotFound, or fault.CodeInvalid for
	// a v that fails Verification.Check.
	SetVerification(ctx context.Context, name, codeHash string, v recording.Verification) error
}

// DriftStore keeps the stale versions a catalogue change leaves and their
// rebaselining. Every method is atomic, and may also return
// fault.CodeUnavailable and fault.CodeInternal (see Store).
type DriftStore interface {
	// Drifted returns the page [offset, offset+limit) (limit 0: all) of the
	// stale versions under the stored catalogue — those with a baseline
	// key (Baseline.Keys) that is not among Catalogue.ContractKeys — current
	// versions first, then by procedure name and code hash, with how many
	// there are in all. Versions with no baseline yet are not stale.
	Drifted(ctx context.Context, limit, offset int) ([]StaleVersion, int, error)

	// Rebaseline gives a version BaselineOf its procedure's signature under
	// the stored catalogue, in one transaction with in.Decision (see
	// RebaselineInput), and returns the version as Version does. Returns
	// fault.CodeNotFound for an unknown procedure or version, fault.CodeConflict
	// (reason ReasonNotStale) for a decision on a version that is not stale.
	Rebaseline(ctx context.Context, in RebaselineInput) (*Version, error)
}

// CaptureInput is one capture, already analysed.
//
// Rules the store applies atomically:
//   - The procedure Name (with Signature) is created when new (Created).
//     A stored procedure of that name with another signature is
//     fault.CodeConflict, reason ReasonSignatureMismatch, and nothing is written
//     (the service then takes the signature's next name, see
//     signature.Names).
//   - The version Version.CodeHash is created when new (VersionCreated),
//     with Version.CapturedAt. The first succeeded version becomes current
//     and stays current until promoted; while a procedure has no succeeded
//     version, its first version is current.
//   - The usage key counts once per procedure and once per version. Counted
//     is true when this capture added the key to the procedure: only
//     succeeded captures count toward the procedure's frequency and its
//     cause edges; a failed capture counts on its version alone.
//   - Cause, when set, is upserted by name (a description is set when the
//     cause has none) and linked to the procedure; the edge counts distinct
//     usage keys, on succeeded captures.
//   - Summary is kept as the procedure's summary when it has none.
//   - Catalogue, when set, is the catalogue the capture was prepared under
//     (its literals lifted, its name chosen, its answer to be decorated):
//     unless the stored catalogue is that one (by revision) when the write
//     reads it, nothing is written and the answer is CatalogueChanged (the
//     service reads the catalogue and prepares the capture again). The
//     check is part of the capture's own transaction or statement: an
//     instance never captures under a catalogue it read before a change
//     that committed, its own or another instance's (docs/adr/0040).
//   - Page, when set, is a Bounded Find the answer needs (the reuse
//     suggestion's page: Service.suggestPage's query), read before the
//     capture writes, in its statement on Neo4j (docs/adr/0049), and
//     answered as CaptureResult.Page; a store that cannot tell it there
//     (Neo4j: a class it has not read) answers none, and the service
//     reads it after the write.
type CaptureInput struct {
	Name      string
	Signature []string
	Version   Version
	Cause     *CauseInput
	UsageKey  string
	At        time.Time
	Catalogue *Catalogue
	Page      *Query
}

// CatalogueChanged is a store's answer to a capture whose
// CaptureInput.Catalogue is no longer the stored catalogue: CodeConflict,
// reason ReasonCatalogueChanged. Nothing was written.
func CatalogueChanged() error {
	return fault.Errorf(fault.CodeConflict, "the catalogue changed while the capture was prepared; send it again").
		WithDetails("reason", audit.ReasonCatalogueChanged)
}

// IsCatalogueChanged reports whether err is CatalogueChanged.
func IsCatalogueChanged(err error) bool {
	var e *fault.Error
	return errors.As(err, &e) && e.Code == fault.CodeConflict && e.Details["reason"] == audit.ReasonCatalogueChanged
}

// CauseInput names a cause in a capture.
type CauseInput struct {
	Name        string
	Description string
}

// CaptureResult is what a capture did.
type CaptureResult struct {
	Procedure *Procedure
	// CodeHash is the version the capture counted: the input's, or the
	// version stored first with the input's canonical hash (a use of it).
	CodeHash       string
	Created        bool
	VersionCreated bool
	Counted        bool
	// PageRead reports whether the store read Find(CaptureInput.Page) as
	// it stood before the capture wrote: Page is that page and PageTotal
	// its total, as Find answers them. False when none was asked or the
	// store could not tell.
	PageRead  bool
	Page      []*Procedure
	PageTotal int
}

// UseInput is one use of a stored procedure. The usage key counts once per
// procedure (frequency) and per version; Cause, when set, links the cause
// and counts the key on the edge. Replay marks a successful replay: it also
// increments use_count and sets last_used_at to At unless it is already
// later (replays may finish out of order). Run, when set, is a finished
// run of the version: it adds to the version's Health (Run.Delta) in the
// same transaction. A run that is not a replay (a failed one, or a turn's
// run of a stored version's code) counts in the health only: no usage
// key, cause, use_count or last_used_at. A failed run is never a replay.
type UseInput struct {
	Name     string
	CodeHash string // the version used; "" means the current one
	UsageKey string
	Cause    string
	Replay   bool
	At       time.Time
	Run      *health.Run
	// DemoteAfter is the number of consecutive failures of the current
	// version that demote the procedure (DemotedAfter; 0: never).
	DemoteAfter int
	// Recording is the run's recording (NewRecording), kept with a
	// successful replay in the same transaction: it replaces the version's
	// recording of the same id unless its content is the same, and the
	// version keeps its KeepRecordings (1 to MaxRecordingsPerVersion)
	// newest. nil keeps none.
	Recording      *recording.Recording
	KeepRecordings int
}

// HealthOnly reports whether in counts in the version's health only: a
// run that is not a replay.
func (in UseInput) HealthOnly() bool { return in.Run != nil && !in.Replay }

// FailedReplay reports whether in is a failed run marked a replay (which
// the stores refuse).
func (in UseInput) FailedReplay() bool { return in.Run != nil && in.Run.Failure != "" && in.Replay }

// LiftInput asks Store.LiftDemotion to lift a procedure's demotion.
type LiftInput struct {
	Name string
	// CodeHash, when set, is the version a verification passed for: it
	// must still be the current one.
	CodeHash string
	// Revision, when set, is the catalogue revision the verification ran
	// under: it must still be the stored one.
	Revision string
	Decision audit.Decision
}

// reasonNotDemoted is the conflict of lifting the demotion of a procedure
// that is not demoted.
const reasonNotDemoted = "not_demoted"

// NotDemoted is Store.LiftDemotion's conflict on a procedure that is not
// demoted (reason reasonNotDemoted).
func NotDemoted(name string) error {
	return fault.Errorf(fault.CodeConflict, "procedure %s is not demoted", name).WithDetails("reason", reasonNotDemoted)
}

// LiftOutdated is Store.LiftDemotion's conflict when the verification
// that asked for it ran another version than the current one, or under
// another catalogue (reason ReasonCatalogueChanged).
func LiftOutdated(name string) error {
	return fault.Errorf(fault.CodeConflict, "the verification of %s ran another version or under another catalogue than the current ones", name).
		WithDetails("reason", audit.ReasonCatalogueChanged)
}

// UseResult is what a use did.
type UseResult struct {
	Procedure *Procedure
	Counted   bool
	// Demotion is what the run did to the procedure's demotion.
	Demotion health.Demotion
}

// Query selects procedures for Find. Empty fields match everything.
type Query struct {
	Causes   []string // linked to any of these causes
	Tools    []string // signature contains all of these
	MinTools int      // at least this many distinct tools
	Status   Status   // current version's status

	// ReadOnly and Exposed filter on the procedure's Class: its kept
	// classification (ReadOnly) and Class.exposed with AllowMutating.
	ReadOnly      *bool
	Exposed       *bool
	AllowMutating bool

	// Search is the words of a relevance search (search.Terms of q): only
	// procedures whose search document matches any of them, ranked by
	// search.RankHits (Procedure.Score set), not in frequency order.
	Search []string

	Limit  int // 0 means no limit
	Offset int

	// SkipTotal says the caller does not need the total: Find may then
	// return -1 for it and stop scanning once the page is full.
	SkipTotal bool

	// Bounded asks for a page read within a bound that does not grow with
	// the store, for advice (Suggest): a store reads at most FindWalk
	// entries (BoundedCallers), the rarest tool's callers when there are
	// few enough, else the walk of the rank index alone, and answers the
	// matches it read. So the page may leave out matches less used than
	// the FindWalk most used procedures; Find's total is -1 then, and the
	// number of matches when it read the callers (every match). It needs
	// tools, a limit and SkipTotal, and no causes (Validate).
	Bounded bool
}
