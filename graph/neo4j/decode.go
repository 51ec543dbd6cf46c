package neo4j

import (
	"fmt"
	"sort"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
)

// The fields of a procedure as the procedure fragment
// (fragments/procedure.cypher) returns them, in its order: the one home of
// that order on this side (TestProcedureFragmentFields reads the fragment).
const (
	pName = iota
	pSignature
	pSummary
	pFrequency
	pUseCount
	pCreatedAt
	pUpdatedAt
	pLastUsedAt
	pGrantEnabled
	pGrantBy
	pGrantAt
	pGrantReason
	pGrantCodeHash
	pGrantBinding
	pRetiredAt
	pRetiredBy
	pRetiredReason
	pDemoted
	pVersion // versionFields, or null
	pCauses  // a list of causeFields
)

// procedureFields names the fields of the procedure fragment's list.
var procedureFields = []string{
	pName: "name", pSignature: "signature", pSummary: "summary", pFrequency: "frequency",
	pUseCount: "use_count", pCreatedAt: "created_at", pUpdatedAt: "updated_at",
	pLastUsedAt: "last_used_at", pGrantEnabled: "grant_enabled", pGrantBy: "grant_by",
	pGrantAt: "grant_at", pGrantReason: "grant_reason", pGrantCodeHash: "grant_code_hash", pGrantBinding: "grant_binding",
	pRetiredAt: "retired_at", pRetiredBy: "retired_by", pRetiredReason: "retired_reason", pDemoted: "demoted",
	pVersion: "version", pCauses: "causes",
}

// The fields of the current version's list in the procedure fragment.
const (
	vCodeHash = iota
	vCode
	vDialect
	vParameters
	vInputSchema
	vStatus
	vOpaque
	vWarnings
	vBaseline
	vHealth
	vVerification
)

// versionFields names the fields of the procedure fragment's version list.
var versionFields = []string{
	vCodeHash: "code_hash", vCode: "code", vDialect: "dialect", vParameters: "parameters",
	vInputSchema: "input_schema", vStatus: "status", vOpaque: "opaque", vWarnings: "warnings",
	vBaseline: "baseline", vHealth: "health", vVerification: "verification",
}

// causeFields names the fields of each cause of the procedure fragment.
var causeFields = []string{"name", "frequency"}

// decodeProcedure reads a procedure as the procedure fragment
// (fragments/procedure.cypher) returns it. Anything else is an error (and
// no procedure), never a panic. The input schema and warnings are decoded
// through the shared caches (storewrap.JSONCache): callers must not modify them.
func (c *jsonCaches) decodeProcedure(v any) (*procedures.Procedure, error) {
	f, err := newFields(v, procedureFields, "procedure")
	if err != nil {
		return nil, err
	}
	p := &procedures.Procedure{
		Name:       f.str(pName),
		Signature:  f.strings(pSignature),
		Summary:    f.str(pSummary),
		Frequency:  f.int(pFrequency),
		UseCount:   f.int(pUseCount),
		CreatedAt:  f.time(pCreatedAt),
		UpdatedAt:  f.time(pUpdatedAt),
		LastUsedAt: f.timePtr(pLastUsedAt),
	}
	if !f.null(pGrantEnabled) {
		p.Grant = &procedures.Grant{
			Enabled:   f.bool(pGrantEnabled),
			GrantedBy: f.str(pGrantBy),
			GrantedAt: f.time(pGrantAt),
			Reason:    f.str(pGrantReason),
			CodeHash:  f.str(pGrantCodeHash),
		}
		if !f.null(pGrantBinding) {
			if s := f.str(pGrantBinding); f.err == nil {
				b, err := decodeBinding(s)
				if err != nil {
					return nil, fmt.Errorf("neo4j store: field grant_binding: %w", err)
				}
				p.Grant.Binding = b
			}
		}
	}
	if !f.null(pRetiredAt) {
		p.Retired = &procedures.Retirement{RetiredBy: f.str(pRetiredBy), RetiredAt: f.time(pRetiredAt), Reason: f.str(pRetiredReason)}
	}
	p.Demoted = !f.null(pDemoted) && f.bool(pDemoted)
	if !f.null(pVersion) {
		v, err := newFields(f.v[pVersion], versionFields, "procedure version")
		if err != nil {
			return nil, err
		}
		p.CodeHash = v.str(vCodeHash)
		p.Code = v.str(vCode)
		p.Dialect = v.str(vDialect)
		p.Parameters = v.strings(vParameters)
		jsonShared(v, vInputSchema, c.schemaCache, &p.InputSchema)
		p.Status = procedures.Status(v.str(vStatus))
		p.Opaque = v.bool(vOpaque)
		jsonShared(v, vWarnings, c.warningCache, &p.Warnings)
		jsonShared(v, vBaseline, c.baselineCache, &p.Baseline)
		p.Health = health.HealthOf(v.ints(vHealth))
		v.json(vVerification, &p.Verification)
		if v.err != nil {
			return nil, v.err
		}
	}
	if causes := f.list(pCauses); len(causes) > 0 {
		p.Causes = make([]procedures.CauseLink, 0, len(causes))
		for _, c := range causes {
			cf, err := newFields(c, causeFields, "procedure cause")
			if err != nil {
				return nil, err
			}
			p.Causes = append(p.Causes, procedures.CauseLink{Name: cf.str(0), Frequency: cf.int(1)})
			if cf.err != nil {
				return nil, cf.err
			}
		}
		sort.Slice(p.Causes, func(i, j int) bool {
			a, b := p.Causes[i], p.Causes[j]
			if a.Frequency != b.Frequency {
				return a.Frequency > b.Frequency
			}
			return a.Name < b.Name
		})
	}
	if f.err != nil {
		return nil, f.err
	}
	return p, nil
}

// decodeVersion reads the version map of versions.cypher and version.cypher.
func decodeVersion(v any, current string) (procedures.Version, error) {
	r := &row{m: asMap(v)}
	out := procedures.Version{
		CodeHash:   r.str("code_hash"),
		Code:       r.str("code"),
		Dialect:    r.str("dialect"),
		Parameters: r.strings("parameters"),
		Opaque:     r.bool("opaque"),
		Summary:    r.str("summary"),
		CapturedAt: r.time("captured_at"),
		Frequency:  r.int("frequency"),
		Status:     procedures.Status(r.str("status")),
	}
	r.json("input_schema", &out.InputSchema)
	r.json("metadata", &out.Metadata)
	r.json("warnings", &out.Warnings)
	r.json("baseline", &out.Baseline)
	out.Health = health.HealthOf(r.ints("health"))
	r.json("verification", &out.Verification)
	out.CanonicalHash = r.str("canonical_hash") // "" on a version stored before it was kept
	out.Current = out.CodeHash == current
	return out, r.err
}

// decodeProcedures reads the "procedure" column of records.
func (c *jsonCaches) decodeProcedures(recs []*neo4j.Record) ([]*procedures.Procedure, error) {
	out := make([]*procedures.Procedure, 0, len(recs))
	for _, rec := range recs {
		v, _ := rec.Get("procedure")
		p, err := c.decodeProcedure(v)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// field returns the value of key in rec (nil when absent).
func field(rec *neo4j.Record, key string) any {
	v, _ := rec.Get(key)
	return v
}

// recordNames returns the string "name" field of each record, in order,
// skipping records without one.
func recordNames(recs []*neo4j.Record) []string {
	out := make([]string, 0, len(recs))
	for _, rec := range recs {
		if n, ok := field(rec, "name").(string); ok {
			out = append(out, n)
		}
	}
	return out
}
