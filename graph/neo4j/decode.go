package neo4jstore

import (
	"fmt"
	"sort"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/procedures"
)

// decodeProcedure reads the procedure map of the procedure fragment
// (fragments/procedure.cypher) and of find_page.cypher.
func decodeProcedure(v any) (*procedures.Procedure, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("neo4j store: procedure is %T, want a map", v)
	}
	r := &row{m: m}
	p := &procedures.Procedure{
		Name:       r.str("name"),
		Signature:  r.strings("signature"),
		Summary:    r.str("summary"),
		Frequency:  r.int("frequency"),
		UseCount:   r.int("use_count"),
		CreatedAt:  r.time("created_at"),
		UpdatedAt:  r.time("updated_at"),
		LastUsedAt: r.timePtr("last_used_at"),
	}
	if _, ok := r.m["grant_enabled"]; ok && r.m["grant_enabled"] != nil {
		p.Grant = &procedures.Grant{
			Enabled:   r.bool("grant_enabled"),
			GrantedBy: r.str("grant_by"),
			GrantedAt: r.time("grant_at"),
			Reason:    r.str("grant_reason"),
			CodeHash:  r.str("grant_code_hash"),
		}
	}
	if r.m["retired_at"] != nil {
		p.Retired = &procedures.Retirement{RetiredBy: r.str("retired_by"), RetiredAt: r.time("retired_at"), Reason: r.str("retired_reason")}
	}
	if v, ok := r.sub("version"); ok {
		p.CodeHash = v.str("code_hash")
		p.Code = v.str("code")
		p.Dialect = v.str("dialect")
		p.Parameters = v.strings("parameters")
		v.json("input_schema", &p.InputSchema)
		p.Status = procedures.Status(v.str("status"))
		p.Opaque = v.bool("opaque")
		v.json("warnings", &p.Warnings)
		if v.err != nil {
			return nil, v.err
		}
	}
	for _, c := range r.list("causes") {
		cr := &row{m: asMap(c)}
		p.Causes = append(p.Causes, procedures.CauseLink{Name: cr.str("name"), Frequency: cr.int("frequency")})
		if cr.err != nil {
			return nil, cr.err
		}
	}
	sort.Slice(p.Causes, func(i, j int) bool {
		a, b := p.Causes[i], p.Causes[j]
		if a.Frequency != b.Frequency {
			return a.Frequency > b.Frequency
		}
		return a.Name < b.Name
	})
	return p, r.err
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
	out.Current = out.CodeHash == current
	return out, r.err
}

// decodeProcedures reads the "procedure" column of records.
func decodeProcedures(recs []*neo4j.Record) ([]*procedures.Procedure, error) {
	out := make([]*procedures.Procedure, 0, len(recs))
	for _, rec := range recs {
		v, _ := rec.Get("procedure")
		p, err := decodeProcedure(v)
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
