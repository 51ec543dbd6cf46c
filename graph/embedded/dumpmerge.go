package embedded

import (
	"context"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/search"
)

// MergeConflict returns the first of procs stored under another signature
// (see dump.Store).
func (s *Store) MergeConflict(ctx context.Context, procs []*dump.ProcedureRecord) (string, error) {
	var name string
	err := s.view(ctx, func(tx *bolt.Tx) error {
		for _, p := range procs {
			rec, err := s.getProc(tx, p.Name)
			if err != nil {
				return err
			}
			if rec != nil && !slices.Equal(rec.Signature, p.Signature) {
				name = p.Name
				return nil
			}
		}
		return nil
	})
	return name, err
}

// mergeRecord merges one dump record into what tx holds by the rules of
// docs/dumps.md "Merging"; merging it again changes nothing. A procedure's search
// document changed is noted in docs.
func (s *Store) mergeRecord(tx *bolt.Tx, r dump.Record, docs *searchDocs) error {
	switch r.Type {
	case dump.TypeCatalogue:
		cat, err := s.catalogueIn(tx)
		if err != nil || len(cat.Tools) > 0 {
			return err // the store's catalogue is kept
		}
		return s.loadRecord(tx, r, docs)
	case dump.TypeCause:
		c, err := getCause(tx, r.Cause.Name)
		if err != nil {
			return err
		}
		switch {
		case c == nil:
			c = &causeRecord{Description: r.Cause.Description}
		case c.Description == "" && r.Cause.Description != "":
			c.Description = r.Cause.Description
		default:
			return nil
		}
		return putCause(tx, r.Cause.Name, c)
	case dump.TypeProcedure:
		return s.mergeProcedure(tx, r.Procedure, docs)
	case dump.TypeVersion:
		return s.mergeVersion(tx, r.Version, r.Group)
	case dump.TypeUsage:
		return s.mergeUsage(tx, r.Usage)
	case dump.TypeEdge:
		if tx.Bucket(bEdgesPC).Get(key(r.Edge.Procedure, r.Edge.Cause)) != nil {
			return nil
		}
		if c, err := getCause(tx, r.Edge.Cause); err != nil || c == nil {
			if err == nil {
				err = fault.Errorf(fault.CodeInvalid, "edge to cause %s, which is not loaded", r.Edge.Cause)
			}
			return err
		}
		return linkCause(tx, r.Edge.Cause, "", r.Edge.Procedure) // frequency 0: its keys count it
	case dump.TypeDecision:
		if tx.Bucket(bDecisionIDs).Get([]byte(r.Decision.ID)) != nil {
			return nil // the store's record of this id is kept
		}
		return appendIndexedDecision(tx, *r.Decision)
	case dump.TypeApproval:
		if tx.Bucket(bTurns).Get([]byte(r.Approval.ID)) != nil {
			return nil
		}
		return putTurn(tx, *r.Approval)
	case dump.TypePolicy:
		if tx.Bucket(bPolicies).Get(key(r.Policy.SessionID, r.Policy.CodeHash)) != nil {
			return nil
		}
	}
	return s.loadRecord(tx, r, docs)
}

// mergeProcedure adds a procedure the store lacks (its counts at zero:
// its usage keys count it) or merges one it holds: created_at the earlier,
// updated_at and last_used_at the later, use_count the larger, the
// summary kept unless empty, the current version, grant and retirement
// kept, search parts united.
func (s *Store) mergeProcedure(tx *bolt.Tx, p *dump.ProcedureRecord, docs *searchDocs) error {
	old, err := s.getProc(tx, p.Name)
	if err != nil {
		return err
	}
	if old == nil {
		fresh := *p
		fresh.Frequency = 0
		if err := s.loadDumpProcedure(tx, &fresh); err != nil {
			return err
		}
		return loadSearchParts(tx, p, docs)
	}
	if !slices.Equal(old.Signature, p.Signature) {
		return fault.Errorf(fault.CodeConflict, "procedure %s is stored with another signature", p.Name)
	}
	old.CreatedAt = min(old.CreatedAt, ms(p.CreatedAt))
	old.UpdatedAt = max(old.UpdatedAt, ms(p.UpdatedAt))
	old.UseCount = max(old.UseCount, p.UseCount)
	if p.LastUsedAt != nil && (old.LastUsedAt == nil || *old.LastUsedAt < ms(*p.LastUsedAt)) {
		v := ms(*p.LastUsedAt)
		old.LastUsedAt = &v
	}
	if old.Summary == "" {
		old.Summary = p.Summary
	}
	if err := putProcRecord(tx, old); err != nil {
		return err
	}
	var parts []string
	if v := tx.Bucket(bSearch).Get([]byte(p.Name)); v != nil {
		if err := decode(v, &parts, "search parts of "+p.Name); err != nil {
			return err
		}
	}
	merged := search.MergeParts(parts, p.SearchParts)
	if len(merged) == len(parts) {
		return nil
	}
	return putSearchParts(tx, p.Name, merged, docs)
}

// putProcRecord stores rec as is; FinishLoad rebuilds its rank entry and
// class.
func putProcRecord(tx *bolt.Tx, rec *procRecord) error {
	b, err := encode(rec)
	if err != nil {
		return err
	}
	return tx.Bucket(bProcs).Put([]byte(rec.Name), b)
}

// mergeVersion adds a version the store lacks (frequency zero: its usage
// keys count it) or merges one it holds (succeeded if either succeeded,
// captured_at the earlier, its baseline kept: the dump's only when it has
// none). The dump's current version (group.Current)
// becomes the procedure's current as a capture of it would make it
// (procedures.BecomesCurrent: when it succeeded and the store's current
// has not).
func (s *Store) mergeVersion(tx *bolt.Tx, v *dump.VersionRecord, group *dump.ProcedureRecord) error {
	if err := checkPart("code_hash", v.CodeHash); err != nil {
		return err
	}
	ver, err := s.getVersion(tx, v.Procedure, v.CodeHash)
	if err != nil {
		return err
	}
	if ver == nil {
		ver = versionFromDump(v)
		ver.Frequency = 0
	} else {
		if v.Status == procedures.StatusSucceeded {
			ver.Status = procedures.StatusSucceeded
		}
		ver.CapturedAt = min(ver.CapturedAt, ms(v.CapturedAt))
		if ver.Baseline == nil {
			ver.Baseline = v.Baseline // the store's baseline is kept when it has one
		}
		ver.Health = healthVector(dump.MergeHealth(health.HealthOf(ver.Health), v.Health.Health()))
	}
	if err := s.putVersion(tx, v.Procedure, ver); err != nil {
		return err
	}
	if group == nil || group.Current != v.CodeHash {
		return nil
	}
	rec, err := s.mustProc(tx, v.Procedure)
	if err != nil || rec.Current == v.CodeHash {
		return err
	}
	var current procedures.Status // "" while the procedure has no current version
	if rec.Current != "" {
		cur, err := s.getVersion(tx, v.Procedure, rec.Current)
		if err != nil {
			return err
		}
		if cur != nil {
			current = cur.Status
		}
	}
	if !procedures.BecomesCurrent(current, ver.Status) {
		return nil
	}
	rec.Current, rec.Demoted = v.CodeHash, group.Demoted
	return putProcRecord(tx, rec)
}

// mergeUsage adds a usage key the store lacks and counts it on its
// procedure, version or edge; a key the store holds counts nothing.
func (s *Store) mergeUsage(tx *bolt.Tx, u *dump.UsageRecord) error {
	if u.Scope == dump.UsageEdge {
		return countEdge(tx, u.Cause, u.Procedure, u.Key)
	}
	b, k := usageKey(u)
	added, err := addKey(tx, b, k)
	if err != nil || !added {
		return err
	}
	if u.Scope == dump.UsageVersion {
		ver, err := s.getVersion(tx, u.Procedure, u.CodeHash)
		if err != nil {
			return err
		}
		if ver == nil {
			return fault.Errorf(fault.CodeInvalid, "usage key of version %s of %s, which is not loaded", u.CodeHash, u.Procedure)
		}
		ver.Frequency++
		return s.putVersion(tx, u.Procedure, ver)
	}
	rec, err := s.mustProc(tx, u.Procedure)
	if err != nil {
		return err
	}
	rec.Frequency++
	return putProcRecord(tx, rec)
}
