package neo4j

import (
	"context"
	"encoding/json"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/recording"
	"github.com/procgraph/procgraph/search"
)

// Empty reports whether the database holds nothing procgraph keeps (see
// dump.Store).
func (s *Store) Empty(ctx context.Context) (bool, error) {
	recs, err := query(ctx, s, "empty", neo4j.AccessModeRead, "dump_empty", nil)
	if err != nil {
		return false, err
	}
	if len(recs) != 1 {
		return false, s.mapError("empty", errRows("dump_empty", len(recs)))
	}
	return field(recs[0], "used") == false, nil
}

// LoadState returns the import in progress (see dump.Store).
func (s *Store) LoadState(ctx context.Context) (*dump.LoadMarker, error) {
	return readTx(ctx, s, "load state", func(ctx context.Context, tx neo4j.ManagedTransaction) (*dump.LoadMarker, error) {
		return loadMarker(ctx, tx)
	})
}

func loadMarker(ctx context.Context, tx neo4j.ManagedTransaction) (*dump.LoadMarker, error) {
	recs, err := collect(ctx, tx, "load_marker_get", nil)
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	m := &dump.LoadMarker{}
	m.DumpID, _ = field(recs[0], "dumpId").(string)
	m.Line, _ = field(recs[0], "line").(int64)
	m.Merge, _ = field(recs[0], "merge").(bool)
	return m, nil
}

// loadStatements are the statements that apply each record type, in dump
// order, loading into an empty store and merging (docs/dumps.md "Merging");
// decisions, turns, policies and causes have one statement for both (a
// record the store holds is kept, which loading meets only in a resumed
// batch: the same record).
var loadStatements = []struct {
	typ          dump.Type
	load, merged string
}{
	{dump.TypeCause, "load_causes", "load_causes"},
	{dump.TypeProcedure, "load_procedures", "merge_procedures"},
	{dump.TypeVersion, "load_versions", "merge_versions"},
	{dump.TypeEdge, "load_edges", "merge_edges"},
	{dump.TypeUsage, "load_usage", "merge_usage"},
	{dump.TypeRecording, "load_recordings", "load_recordings"},
	{dump.TypeDecision, "load_decisions", "load_decisions"},
	{dump.TypeApproval, "load_turns", "load_turns"},
	{dump.TypePolicy, "load_policies", "load_policies"},
}

// Load applies dump records and moves the marker in one write transaction
// (see dump.Store): one UNWIND statement per record type, in dump
// order, after the batch's tools. A batch whose line the marker has
// reached committed with it already and is not applied again; so loading
// into an empty store creates what it loads (each record is applied once)
// rather than merging it.
func (s *Store) Load(ctx context.Context, m dump.LoadMarker, recs []dump.Record) error {
	// Loaded procedures carry search texts: the next search waits for the
	// index (searchfresh.go).
	defer s.searchFresh.wrote()
	var cat *procedures.Catalogue
	var tools []string
	seen := map[string]bool{}
	rows := map[dump.Type][]map[string]any{}
	for _, r := range recs {
		if r.Type == dump.TypeProcedure {
			for _, t := range r.Procedure.Signature {
				if !seen[t] {
					seen[t] = true
					tools = append(tools, t)
				}
			}
		}
		row, err := loadRow(r)
		if err != nil {
			return err
		}
		switch r.Type {
		case dump.TypeCatalogue:
			cat = r.Catalogue
			continue
		case dump.TypeVersion:
			row["current"], row["demoted"] = nil, false
			if r.Group != nil {
				row["current"], row["demoted"] = r.Group.Current, r.Group.Demoted
			}
		}
		rows[r.Type] = append(rows[r.Type], row)
	}
	now := dbTime(time.Now())
	_, err := writeTx(ctx, s, "load", func(ctx context.Context, tx neo4j.ManagedTransaction) (struct{}, error) {
		marked, err := collect(ctx, tx, "load_marker_set", map[string]any{"dumpId": m.DumpID, "line": m.Line, "merge": m.Merge})
		if err != nil {
			return struct{}{}, err
		}
		if len(marked) == 0 {
			return struct{}{}, fault.Errorf(fault.CodeConflict, "another import is in progress")
		}
		if field(marked[0], "done") == true {
			return struct{}{}, nil // this batch committed with the marker already
		}
		if err := exec(ctx, tx, "auth_bump", nil); err != nil {
			return struct{}{}, err
		}
		if len(tools) > 0 {
			if err := exec(ctx, tx, "load_tools", map[string]any{"tools": tools}); err != nil {
				return struct{}{}, err
			}
		}
		if cat != nil {
			keep := false
			if m.Merge {
				have, err := catalogueIn(ctx, tx)
				if err != nil {
					return struct{}{}, err
				}
				keep = len(have.Tools) > 0 // the store's catalogue is kept
			}
			if !keep {
				if err := putCatalogueIn(ctx, tx, cat, now); err != nil {
					return struct{}{}, err
				}
			}
		}
		for _, t := range loadStatements {
			n := len(rows[t.typ])
			if n == 0 {
				continue
			}
			params := map[string]any{"rows": rows[t.typ], "at": now}
			if t.typ == dump.TypeRecording {
				res, err := collect(ctx, tx, t.load, params)
				if err != nil {
					return struct{}{}, err
				}
				if len(res) != 1 || len(asList(field(res[0], "missing"))) > 0 {
					return struct{}{}, invalid("recording", "a recording of a version that is not loaded")
				}
				continue
			}
			if !m.Merge {
				if err := exec(ctx, tx, t.load, params); err != nil {
					return struct{}{}, err
				}
				continue
			}
			params["max"] = search.MaxParts
			res, err := collect(ctx, tx, t.merged, params)
			if err != nil {
				return struct{}{}, err
			}
			if t.typ == dump.TypeProcedure && (len(res) != 1 || field(res[0], "merged") != int64(n)) {
				return struct{}{}, fault.Errorf(fault.CodeConflict, "a merged procedure is stored with another signature")
			}
		}
		return struct{}{}, nil
	})
	return err
}

// MergeConflict returns the first of procs stored under another signature
// (see dump.Store).
func (s *Store) MergeConflict(ctx context.Context, procs []*dump.ProcedureRecord) (string, error) {
	rows := make([]map[string]any, len(procs))
	for i, p := range procs {
		rows[i] = map[string]any{"name": p.Name, "signature": stringList(p.Signature)}
	}
	recs, err := query(ctx, s, "merge check", neo4j.AccessModeRead, "merge_conflicts", map[string]any{"rows": rows})
	if err != nil {
		return "", err
	}
	bad := map[string]bool{}
	for _, rec := range recs {
		if n, ok := field(rec, "name").(string); ok {
			bad[n] = true
		}
	}
	for _, p := range procs {
		if bad[p.Name] {
			return p.Name, nil
		}
	}
	return "", nil
}

// loadRow is a dump record as its load statement's row.
func loadRow(r dump.Record) (map[string]any, error) {
	switch r.Type {
	case dump.TypeCatalogue:
		return nil, nil
	case dump.TypeCause:
		return map[string]any{"name": r.Cause.Name, "description": r.Cause.Description}, nil
	case dump.TypeProcedure:
		p := r.Procedure
		var err error
		row := map[string]any{"name": p.Name, "signature": p.Signature, "summary": p.Summary, "frequency": p.Frequency,
			"use_count": p.UseCount, "created_at": dbTime(p.CreatedAt), "updated_at": dbTime(p.UpdatedAt), "last_used_at": nil,
			"current": p.Current, "grant_enabled": nil, "grant_by": nil, "grant_at": nil, "grant_reason": nil, "grant_code_hash": nil, "grant_binding": nil,
			"retired_at": nil, "retired_by": nil, "retired_reason": nil, "search_parts": nil, "search_text": nil,
			"demoted": p.Demoted}
		if parts := search.MergeParts(nil, p.SearchParts); len(parts) > 0 {
			row["search_parts"], row["search_text"] = stringList(parts), search.Document(parts)
		}
		if p.LastUsedAt != nil {
			row["last_used_at"] = dbTime(*p.LastUsedAt)
		}
		if g := p.Grant; g != nil {
			row["grant_enabled"], row["grant_by"], row["grant_at"] = g.Enabled, g.GrantedBy, dbTime(g.GrantedAt)
			row["grant_reason"], row["grant_code_hash"] = g.Reason, g.CodeHash
			if row["grant_binding"], err = encodeBinding(g.Binding); err != nil {
				return nil, err
			}
		}
		if rt := p.Retired; rt != nil {
			row["retired_at"], row["retired_by"], row["retired_reason"] = dbTime(rt.RetiredAt), rt.RetiredBy, rt.Reason
		}
		return row, nil
	case dump.TypeVersion:
		v := r.Version
		schema, meta, warnings, err := versionJSON(v.InputSchema, v.Metadata, v.Warnings)
		if err != nil {
			return nil, err
		}
		var baseline, keys any // null: backfillBaselines gives it one
		if v.Baseline != nil {
			b, err := json.Marshal(v.Baseline)
			if err != nil {
				return nil, invalid("baseline", "the baseline cannot be stored: %v", err)
			}
			baseline, keys = string(b), stringList(v.Baseline.Keys())
		}
		return map[string]any{"baseline": baseline, "baseline_keys": keys, "procedure": v.Procedure, "id": versionID(v.Procedure, v.CodeHash), "code_hash": v.CodeHash,
			"code": v.Code, "dialect": v.Dialect, "parameters": stringList(v.Parameters), "input_schema": schema,
			"opaque": v.Opaque, "warnings": warnings, "summary": v.Summary, "metadata": meta,
			"captured_at": dbTime(v.CapturedAt), "frequency": v.Frequency, "status": string(v.Status),
			"health": healthVector(v.Health.Health())}, nil
	case dump.TypeRecording:
		rec, err := r.Recording.Recording()
		if err != nil {
			return nil, err
		}
		body, err := recording.EncodeRecordingBody(rec)
		if err != nil {
			return nil, invalid("recording", "%v", err)
		}
		return map[string]any{"procedure": rec.Procedure, "code_hash": rec.CodeHash, "id": rec.ID, "recorded_at": dbTime(rec.RecordedAt),
			"content_hash": rec.ContentHash, "bytes": int64(rec.Bytes), "body": string(body), "keep": int64(r.Keep)}, nil
	case dump.TypeUsage:
		u := r.Usage
		scope := u.Scope
		if scope == dump.UsageEdge {
			scope = "cause"
		}
		row := map[string]any{"scope": scope, "procedure": u.Procedure, "key": u.Key, "code_hash": nil, "cause": nil}
		if u.CodeHash != "" {
			row["code_hash"] = u.CodeHash
		}
		if u.Cause != "" {
			row["cause"] = u.Cause
		}
		return row, nil
	case dump.TypeEdge:
		return map[string]any{"cause": r.Edge.Cause, "procedure": r.Edge.Procedure, "frequency": r.Edge.Frequency}, nil
	case dump.TypeDecision:
		return decisionParams(*r.Decision)
	case dump.TypeApproval:
		return turnParams(*r.Approval)
	case dump.TypePolicy:
		p := r.Policy
		sp := p.SessionPolicy()
		sp.SetAt = dbTime(sp.SetAt)
		b, err := json.Marshal(policyRecord{SessionPolicy: sp, Session: p.SessionID})
		if err != nil {
			return nil, invalid("policy", "the policy cannot be stored: %v", err)
		}
		return map[string]any{"id": policyID(p.SessionID, p.CodeHash), "session": p.SessionID, "codeHash": p.CodeHash, "record": string(b)}, nil
	}
	return nil, invalid("type", "dump record of type %q cannot be loaded", r.Type)
}

// FinishLoad classifies every procedure (the classification the load left
// unset) and removes the marker (see dump.Store).
func (s *Store) FinishLoad(ctx context.Context, dumpID string) error {
	m, err := s.LoadState(ctx)
	if err != nil {
		return err
	}
	if m == nil || m.DumpID != dumpID {
		return fault.Errorf(fault.CodeConflict, "no import of dump %s in progress", dumpID)
	}
	if m.Merge {
		err = s.reclassifyAll(ctx, "classify_set")
	} else {
		err = s.reclassifyAll(ctx, "classify_load")
	}
	if err != nil {
		return err
	}
	_, err = writeTx(ctx, s, "finish load", func(ctx context.Context, tx neo4j.ManagedTransaction) (struct{}, error) {
		return struct{}{}, exec(ctx, tx, "load_marker_clear", nil)
	})
	return err
}

// reclassifyAll reclassifies every procedure, classifyBatch per
// transaction, by name, keeping the classifications with stmt: after a
// merge classify_set.cypher (procedures the store held may call ones it
// gained, or see another catalogue), after an import into an empty store
// classify_load.cypher (every procedure is new: counted per class at once).
func (s *Store) reclassifyAll(ctx context.Context, stmt string) error {
	for after := ""; ; {
		names, err := writeTx(ctx, s, "classify", func(ctx context.Context, tx neo4j.ManagedTransaction) ([]string, error) {
			if err := lockCatalogue(ctx, tx); err != nil {
				return nil, err
			}
			recs, err := collect(ctx, tx, "procedure_names", map[string]any{"after": after, "limit": classifyBatch})
			if err != nil {
				return nil, err
			}
			names := recordNames(recs)
			return names, classifyWith(ctx, tx, txClasses{ctx, tx}, names, stmt)
		})
		if err != nil {
			return err
		}
		if len(names) < classifyBatch {
			return nil
		}
		after = names[len(names)-1]
	}
}

// healthVector is h as a version node keeps it: null when it never ran.
func healthVector(h health.Health) any {
	if h.Runs == 0 {
		return nil
	}
	return h.Vector()
}
