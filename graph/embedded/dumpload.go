package embedded

import (
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/search"
)

// loadRecord writes one dump record with the values it holds; writing it
// again changes nothing. A procedure's search document changed is noted in
// docs.
func (s *Store) loadRecord(tx *bolt.Tx, r dump.Record, docs *searchDocs) error {
	switch r.Type {
	case dump.TypeCatalogue:
		b, err := encode(catalogueRecord{Tools: r.Catalogue.Tools, Revision: r.Catalogue.Revision})
		if err != nil {
			return err
		}
		return tx.Bucket(bCatalogue).Put(catKey, b)
	case dump.TypeCause:
		c, err := getCause(tx, r.Cause.Name)
		if err != nil {
			return err
		}
		if c == nil {
			c = &causeRecord{}
		}
		c.Description = r.Cause.Description
		return putCause(tx, r.Cause.Name, c)
	case dump.TypeProcedure:
		if err := s.loadDumpProcedure(tx, r.Procedure); err != nil {
			return err
		}
		return loadSearchParts(tx, r.Procedure, docs)
	case dump.TypeVersion:
		v := r.Version
		if err := checkPart("code_hash", v.CodeHash); err != nil {
			return err
		}
		return s.putVersion(tx, v.Procedure, versionFromDump(v))
	case dump.TypeUsage:
		b, k := usageKey(r.Usage)
		_, err := addKey(tx, b, k)
		return err
	case dump.TypeEdge:
		return loadEdge(tx, r.Edge)
	case dump.TypeDecision:
		return appendIndexedDecision(tx, *r.Decision)
	case dump.TypeApproval:
		return putTurn(tx, *r.Approval)
	case dump.TypeRecording:
		return s.loadRecording(tx, r.Recording, r.Keep)
	case dump.TypePolicy:
		p := r.Policy
		sp := p.SessionPolicy()
		sp.SetAt = norm(sp.SetAt)
		b, err := encode(policyRecord{SessionPolicy: sp, Session: p.SessionID})
		if err != nil {
			return err
		}
		return tx.Bucket(bPolicies).Put(key(p.SessionID, p.CodeHash), b)
	}
	return fault.Errorf(fault.CodeInvalid, "dump record of type %q cannot be loaded", r.Type)
}

func (s *Store) loadDumpProcedure(tx *bolt.Tx, p *dump.ProcedureRecord) error {
	for _, part := range append([]string{p.Name, p.Current}, p.Signature...) {
		if err := checkPart("procedure", part); err != nil {
			return err
		}
	}
	old, err := s.getProc(tx, p.Name)
	if err != nil {
		return err
	}
	rec := &procRecord{
		Name: p.Name, Signature: p.Signature, Summary: p.Summary, Current: p.Current, Frequency: p.Frequency,
		UseCount: p.UseCount, CreatedAt: ms(p.CreatedAt), UpdatedAt: ms(p.UpdatedAt), Demoted: p.Demoted,
	}
	if p.LastUsedAt != nil {
		v := ms(*p.LastUsedAt)
		rec.LastUsedAt = &v
	}
	if p.Retired != nil {
		rec.Retired = &retiredRecord{By: p.Retired.RetiredBy, At: ms(p.Retired.RetiredAt), Reason: p.Retired.Reason}
	}
	b, err := encode(rec)
	if err != nil {
		return err
	}
	if err := tx.Bucket(bProcs).Put([]byte(p.Name), b); err != nil {
		return err
	}
	if old == nil {
		if err := createProcIndexes(tx, rec); err != nil {
			return err
		}
	}
	grants := tx.Bucket(bGrants)
	if p.Grant == nil {
		return grants.Delete([]byte(p.Name))
	}
	g := *p.Grant
	g.GrantedAt = norm(g.GrantedAt)
	if b, err = encode(g); err != nil {
		return err
	}
	return grants.Put([]byte(p.Name), b)
}

// loadEdge sets the edge's frequency and moves its cause's counts by the
// difference.
func loadEdge(tx *bolt.Tx, e *dump.EdgeRecord) error {
	c, err := getCause(tx, e.Cause)
	if err != nil {
		return err
	}
	if c == nil {
		return fault.Errorf(fault.CodeInvalid, "edge to cause %s, which is not loaded", e.Cause)
	}
	pc := key(e.Procedure, e.Cause)
	if old := tx.Bucket(bEdgesPC).Get(pc); old == nil {
		c.Procedures++
	} else {
		c.Frequency -= int64(getU64(old))
	}
	c.Frequency += e.Frequency
	if err := tx.Bucket(bEdgesPC).Put(pc, u64(uint64(e.Frequency))); err != nil {
		return err
	}
	if err := tx.Bucket(bEdgesCP).Put(key(e.Cause, e.Procedure), u64(uint64(e.Frequency))); err != nil {
		return err
	}
	return putCause(tx, e.Cause, c)
}

// loadSearchParts sets the procedure's search parts as dumped; the same
// parts again write nothing.
func loadSearchParts(tx *bolt.Tx, p *dump.ProcedureRecord, docs *searchDocs) error {
	parts := search.MergeParts(nil, p.SearchParts)
	if len(parts) == 0 {
		return nil
	}
	if v := tx.Bucket(bSearch).Get([]byte(p.Name)); v != nil {
		var old []string
		if err := decode(v, &old, "search parts of "+p.Name); err != nil {
			return err
		}
		if slices.Equal(old, parts) {
			return nil
		}
	}
	return putSearchParts(tx, p.Name, parts, docs)
}

// versionFromDump is a dumped version as stored (without a baseline,
// putVersion gives it the stored catalogue's contracts).
func versionFromDump(v *dump.VersionRecord) *versionRecord {
	return &versionRecord{
		CodeHash: v.CodeHash, Code: v.Code, Dialect: v.Dialect, Parameters: v.Parameters, InputSchema: v.InputSchema,
		Opaque: v.Opaque, Warnings: v.Warnings, Summary: v.Summary, Metadata: v.Metadata,
		CapturedAt: ms(v.CapturedAt), Frequency: v.Frequency, Status: v.Status, Health: healthVector(v.Health.Health()),
		Baseline: v.Baseline,
	}
}

// healthVector is h as a version record keeps it: nil when it never ran.
func healthVector(h health.Health) []int64 {
	if h.Runs == 0 {
		return nil
	}
	return h.Vector()
}

// usageKey is the bucket and key of a dumped usage key.
func usageKey(u *dump.UsageRecord) ([]byte, []byte) {
	switch u.Scope {
	case dump.UsageProcedure:
		return bKeysProc, key(u.Procedure, u.Key)
	case dump.UsageVersion:
		return bKeysVersion, key(u.Procedure, u.CodeHash, u.Key)
	}
	return bKeysEdge, key(u.Cause, u.Procedure, u.Key)
}
