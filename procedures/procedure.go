package procedures

import (
	"time"

	"github.com/procgraph/procgraph/binding"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/recording"
)

// Status is the outcome a capture reported for its code.
type Status string

// The statuses of a captured version.
const (
	StatusSucceeded Status = "succeeded"
	StatusFailed    Status = "failed"
)

// Valid reports whether s is a known status.
func (s Status) Valid() bool { return s == StatusSucceeded || s == StatusFailed }

// Warning is an advisory note from the static analysis, with its position.
type Warning struct {
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Message string `json:"message"`
}

// CauseLink is a procedure's edge to a cause it addressed, with the number of
// distinct usage keys that named that cause.
type CauseLink struct {
	Name      string `json:"name"`
	Frequency int64  `json:"frequency"`
}

// Grant is a durable auto-run grant as stored: bound to the code hash that was
// current when it was granted.
type Grant struct {
	Enabled   bool      `json:"enabled"`
	GrantedBy string    `json:"granted_by"`
	GrantedAt time.Time `json:"granted_at"`
	Reason    string    `json:"reason"`
	CodeHash  string    `json:"code_hash"`
	// Binding is what was granted (the procedure's current version then);
	// nil for a grant stored before bindings or imported unbound, which is
	// never active (InactiveUnbound).
	Binding *binding.Binding `json:"binding,omitempty"`
}

// Held reports whether g is a grant its procedure holds: stored and
// enabled, active or not (see AutoRun). A nil g holds nothing. It is the
// one rule of what counts as granted (Store.Granted, autoRunState).
func (g *Grant) Held() bool { return g != nil && g.Enabled }

// autoRun is a procedure's auto-run state as the API shows it: the stored
// grant plus whether it is active now, and why not.
type autoRun struct {
	Enabled        bool       `json:"enabled"`
	Active         bool       `json:"active"`
	GrantedBy      *string    `json:"granted_by"`
	GrantedAt      *time.Time `json:"granted_at"`
	Reason         *string    `json:"reason"`
	CodeHash       *string    `json:"code_hash"`
	InactiveReason *string    `json:"inactive_reason"`
	// Grantable is whether a grant given now would be accepted
	// (Service.Grantable); GrantRefusal is its refusal's reason otherwise
	// (procedure_not_succeeded, not_read_only), nil when grantable.
	Grantable    bool    `json:"grantable"`
	GrantRefusal *string `json:"grant_refusal"`
}

// Procedure is one procedure: a tool-call signature with its current version,
// counts, causes and grant. The classification fields (ReadOnly,
// StateChangingTools, UnknownTools, ExternalAccess, Problem, Exposed,
// AutoRun.Active) are derived from the current catalogue by the service
// (Classify, Class.exposed), never read from a stored flag; stores keep
// Classify's read-only verdict only to filter and count (Store.Find).
type Procedure struct {
	Name        string         `json:"name"`
	Signature   []string       `json:"signature"`
	Summary     string         `json:"summary"`
	Description string         `json:"description"`
	Code        string         `json:"code"`
	Dialect     string         `json:"dialect"`
	CodeHash    string         `json:"code_hash"`
	Parameters  []string       `json:"parameters"`
	InputSchema map[string]any `json:"input_schema"`
	Status      Status         `json:"status"`
	Frequency   int64          `json:"frequency"`
	UseCount    int64          `json:"use_count"`

	ReadOnly           bool      `json:"read_only"`
	StateChangingTools []string  `json:"state_changing_tools"`
	UnknownTools       []string  `json:"unknown_tools"`
	Opaque             bool      `json:"opaque"`
	Warnings           []Warning `json:"warnings"`
	ExternalAccess     bool      `json:"external_access"`
	// Problem is the classification's nesting problem (ReasonNestingTooDeep,
	// ReasonCycle or ReasonCallsRetired), "" when there is none.
	Problem string `json:"-"`
	Exposed bool   `json:"exposed"`

	AutoRun autoRun     `json:"auto_run"`
	Causes  []CauseLink `json:"causes"`
	// Stale and Drift are the current version's drift under the current
	// catalogue (DriftOf its Baseline), derived by the service.
	Stale bool    `json:"stale"`
	Drift []Drift `json:"drift"`
	// Health is the current version's.
	Health health.Health `json:"health"`
	// Verification is the current version's last verification (nil: never).
	Verification *recording.Verification `json:"verification"`
	// Demoted is whether the current version's failures demoted the
	// procedure (DemotedAfter): it is then not exposed and its grant is
	// inactive (inactiveUnhealthy), but it can still be invoked
	// interactively.
	Demoted bool `json:"demoted"`
	// Baseline is the current version's, as stored (nil: not yet given one).
	Baseline *Baseline `json:"-"`
	// DriftRevision is the catalogue revision Stale and Drift were derived
	// under (Service.ClearDrift takes it).
	DriftRevision string `json:"-"`
	// Score is the relevance of a search's match (search.RankHits), nil outside
	// a search.
	Score *float64 `json:"score,omitempty"`

	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	LastUsedAt *time.Time `json:"last_used_at"`

	// Grant is the stored grant, nil when none was ever set.
	Grant *Grant `json:"-"`

	// Retired is set while an admin has retired the procedure (see
	// Service.SetRetired): it is then hidden from planners and refused on
	// invoke, but still listed, with this state, for analysts.
	Retired *Retirement `json:"retired"`
}

// Retirement is who retired a procedure, when and why.
type Retirement struct {
	RetiredBy string    `json:"retired_by"`
	RetiredAt time.Time `json:"retired_at"`
	Reason    string    `json:"reason"`
}

// procRefs returns the nested procedure references in the signature.
func (p *Procedure) procRefs() []string {
	var refs []string
	for _, n := range p.Signature {
		if IsProcName(n) {
			refs = append(refs, n)
		}
	}
	return refs
}

// ProcPrefix starts every procedure's tool name.
const ProcPrefix = "proc__"

// IsProcName reports whether a tool name refers to a procedure.
func IsProcName(name string) bool {
	return len(name) > len(ProcPrefix) && name[:len(ProcPrefix)] == ProcPrefix
}

// Version is one distinct code (by code hash) captured for a procedure.
// Its JSON is the version with its code; Listed is the entry of a list of
// versions (docs/api.md's shape, without code).
type Version struct {
	CodeHash string `json:"code_hash"`
	// CanonicalHash is the hash of the version's canonical program
	// (signature.CanonicalHash; docs/design.md "The canonical program"):
	// a capture of another text of the same program is a use of this
	// version. "" for a version stored before it was kept, until the
	// store is opened by this release (Service.Open).
	CanonicalHash string         `json:"canonical_hash,omitempty"`
	Code          string         `json:"code,omitempty"`
	Dialect       string         `json:"dialect,omitempty"`
	Parameters    []string       `json:"parameters,omitempty"`
	InputSchema   map[string]any `json:"input_schema,omitempty"`
	Opaque        bool           `json:"opaque,omitempty"`
	Warnings      []Warning      `json:"warnings,omitempty"`
	Summary       string         `json:"summary,omitempty"`
	Metadata      map[string]any `json:"-"` // the capturing agent's, not shown
	CapturedAt    time.Time      `json:"captured_at"`
	Frequency     int64          `json:"frequency"`
	Status        Status         `json:"status"`
	Current       bool           `json:"current"`
	// Stale and Drift: DriftOf Baseline under the current catalogue, set by
	// the service (docs/design.md "Drift").
	Stale bool    `json:"stale"`
	Drift []Drift `json:"drift"`
	// Health is how the version's runs went.
	Health health.Health `json:"health"`
	// Verification is its last verification against its recordings (nil:
	// never verified).
	Verification *recording.Verification `json:"verification"`
	// Baseline is what the version was last known to work with (nil: a
	// version stored before drift was kept, not yet given one).
	Baseline *Baseline `json:"-"`
}

// Listed returns v as an entry of a list of versions: without its code.
func (v Version) Listed() Version {
	return Version{CodeHash: v.CodeHash, CanonicalHash: v.CanonicalHash, CapturedAt: v.CapturedAt, Frequency: v.Frequency, Status: v.Status, Current: v.Current,
		Stale: v.Stale, Drift: v.Drift, Health: v.Health, Verification: v.Verification, Baseline: v.Baseline}
}

// Cause is something procedures addressed, e.g. "input dataset unavailable".
type Cause struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Procedures  int64  `json:"procedures"`
	Frequency   int64  `json:"frequency"`
}

// CauseProcedure is a procedure linked to a cause, with the edge's frequency.
type CauseProcedure struct {
	Name      string `json:"name"`
	Frequency int64  `json:"frequency"`
}
