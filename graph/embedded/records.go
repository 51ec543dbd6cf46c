package embedded

import (
	"encoding/binary"
	"encoding/json"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/internal/storewrap"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/recording"
)

// procRecord is a procedure as stored, without its versions, causes or grant.
type procRecord struct {
	Name        string   `json:"name"`
	Signature   []string `json:"signature"`
	Summary     string   `json:"summary,omitempty"`
	Description string   `json:"description,omitempty"`
	Current     string   `json:"current"`
	Frequency   int64    `json:"frequency"`
	UseCount    int64    `json:"use_count"`
	CreatedAt   int64    `json:"created_at"`
	UpdatedAt   int64    `json:"updated_at"`
	LastUsedAt  *int64   `json:"last_used_at,omitempty"`
	// ReadOnly and Problem are the classification procedures.Reclassify
	// computed, kept up to date by reclassify (see procedures.Store.Find).
	ReadOnly bool   `json:"read_only,omitempty"`
	Problem  string `json:"problem,omitempty"`
	// Retired is set while the procedure is retired (Store.SetRetired).
	Retired *retiredRecord `json:"retired,omitempty"`
	// Demoted is set while the procedure is demoted (health.DemotedAfter).
	Demoted bool `json:"demoted,omitempty"`
}

// retiredRecord is a stored procedures.Retirement.
type retiredRecord struct {
	By     string `json:"by"`
	At     int64  `json:"at"`
	Reason string `json:"reason,omitempty"`
}

// versionRecord is a version as stored.
type versionRecord struct {
	CodeHash      string               `json:"code_hash"`
	CanonicalHash string               `json:"canonical_hash,omitempty"`
	Code          string               `json:"code"`
	Dialect       string               `json:"dialect,omitempty"`
	Parameters    []string             `json:"parameters,omitempty"`
	InputSchema   map[string]any       `json:"input_schema,omitempty"`
	Opaque        bool                 `json:"opaque,omitempty"`
	Warnings      []procedures.Warning `json:"warnings,omitempty"`
	Summary       string               `json:"summary,omitempty"`
	Metadata      map[string]any       `json:"metadata,omitempty"`
	CapturedAt    int64                `json:"captured_at"`
	Frequency     int64                `json:"frequency"`
	Status        procedures.Status    `json:"status"`
	// Baseline is the version's drift baseline (nil: stored before drift
	// was kept; upgradeBaselines gives it one).
	Baseline *procedures.Baseline `json:"baseline,omitempty"`
	// Health is the version's health vector (health.HealthDelta), kept
	// in bHealth (health.go): getVersion fills it, putVersion stores it
	// there; only a record written before carries it.
	Health []int64 `json:"health,omitempty"`
	// Verification is the version's last verification (Store.SetVerification).
	Verification *recording.Verification `json:"verification,omitempty"`
}

// causeRecord is a cause as stored, with its maintained counts.
type causeRecord struct {
	Description string `json:"description,omitempty"`
	Procedures  int64  `json:"procedures"`
	Frequency   int64  `json:"frequency"`
}

// catalogueRecord is the stored catalogue.
type catalogueRecord struct {
	Tools    []procedures.Tool `json:"tools"`
	Revision string            `json:"revision"`
}

func newVersionRecord(v procedures.Version) *versionRecord {
	return &versionRecord{
		CodeHash: v.CodeHash, CanonicalHash: v.CanonicalHash, Code: v.Code, Dialect: v.Dialect, Parameters: v.Parameters,
		InputSchema: v.InputSchema, Opaque: v.Opaque, Warnings: v.Warnings, Summary: v.Summary,
		Metadata: v.Metadata, CapturedAt: ms(v.CapturedAt), Status: v.Status, Baseline: v.Baseline,
	}
}

func (r *versionRecord) version(current bool) procedures.Version {
	return procedures.Version{
		CodeHash: r.CodeHash, CanonicalHash: r.CanonicalHash, Code: r.Code, Dialect: r.Dialect, Parameters: r.Parameters,
		InputSchema: r.InputSchema, Opaque: r.Opaque, Warnings: r.Warnings, Summary: r.Summary,
		Metadata: r.Metadata, CapturedAt: fromMs(r.CapturedAt), Frequency: r.Frequency,
		Status: r.Status, Current: current, Baseline: r.Baseline, Health: health.HealthOf(r.Health), Verification: r.Verification,
	}
}

// procedure assembles the domain procedure from its stored parts.
// hv is cur's health vector (healthOf).
func (r *procRecord) procedure(cur *versionRecord, hv []int64, causes []procedures.CauseLink, g *procedures.Grant) *procedures.Procedure {
	p := &procedures.Procedure{
		Name: r.Name, Signature: r.Signature, Summary: r.Summary, Description: r.Description,
		Frequency: r.Frequency, UseCount: r.UseCount, Causes: causes, Grant: g, Demoted: r.Demoted,
		CreatedAt: fromMs(r.CreatedAt), UpdatedAt: fromMs(r.UpdatedAt),
	}
	if r.LastUsedAt != nil {
		t := fromMs(*r.LastUsedAt)
		p.LastUsedAt = &t
	}
	if r.Retired != nil {
		p.Retired = &procedures.Retirement{RetiredBy: r.Retired.By, RetiredAt: fromMs(r.Retired.At), Reason: r.Retired.Reason}
	}
	if cur != nil {
		p.Code, p.Dialect, p.CodeHash = cur.Code, cur.Dialect, cur.CodeHash
		p.Parameters, p.InputSchema, p.Status = cur.Parameters, cur.InputSchema, cur.Status
		p.Opaque, p.Warnings, p.Baseline = cur.Opaque, cur.Warnings, cur.Baseline
		p.Health, p.Verification = health.HealthOf(hv), cur.Verification
	}
	return p
}

func encode(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fault.Errorf(fault.CodeInvalid, "value does not encode as JSON: %v", err)
	}
	return b, nil
}

func decode(b []byte, v any, what string) error {
	if err := json.Unmarshal(b, v); err != nil {
		return fault.Errorf(fault.CodeInternal, "embedded store: stored %s is corrupt: %v", what, err)
	}
	return nil
}

// summary is what Find filters on, kept in the rank index: the procedure's
// class flags (classFlags) and its signature.
type summary struct {
	flags byte
	sig   [][]byte // aliases the encoded value
}

// class is the summarised procedure's Class: its flags' class, whose one
// count (embeddedClassFields) is the number of tools of its signature.
func (s *summary) class() procedures.Class {
	c := classOfFlags[s.flags]
	c.Tools = len(s.sig)
	return c
}

// classOf is the Class of a stored procedure with current version cur.
func classOf(rec *procRecord, cur *versionRecord) procedures.Class {
	return procedures.Class{Status: cur.Status, Opaque: cur.Opaque, Tools: len(rec.Signature), ReadOnly: rec.ReadOnly,
		Problem: rec.Problem != "", Retired: rec.Retired != nil, Demoted: rec.Demoted}
}

func encodeSummary(c procedures.Class, sig []string) []byte {
	b := make([]byte, 0, 8+16*len(sig))
	b = append(b, classFlags(c))
	b = binary.AppendUvarint(b, uint64(len(sig)))
	for _, s := range sig {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// decodeSummary decodes b into s, reusing s.sig.
func decodeSummary(b []byte, s *summary) bool {
	if len(b) < 2 {
		return false
	}
	s.flags = b[0]
	b = b[1:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return false
	}
	b = b[k:]
	s.sig = s.sig[:0]
	for i := uint64(0); i < n; i++ {
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l {
			return false
		}
		s.sig = append(s.sig, b[k:k+int(l)])
		b = b[k+int(l):]
	}
	return true
}

// decodeCaches are a store's read-path caches of decoded procedure and
// version records (entries validated against the stored bytes).
type decodeCaches struct {
	procCache    *storewrap.DecodeCache[procRecord]
	versionCache *storewrap.DecodeCache[versionRecord]
}

// newDecodeCaches returns empty caches of 8 MiB of procedure records and
// 32 MiB of version records.
func newDecodeCaches() decodeCaches {
	return decodeCaches{
		procCache:    storewrap.NewDecodeCache[procRecord](8<<20, decodeRecord[procRecord]),
		versionCache: storewrap.NewDecodeCache[versionRecord](32<<20, decodeRecord[versionRecord]),
	}
}

// decodeRecord is decode for a cache of T records.
func decodeRecord[T any](raw []byte, rec *T, what string) error { return decode(raw, rec, what) }
