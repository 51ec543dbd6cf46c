package neo4j

import (
	"context"
	"maps"
	"sort"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/procedures"
)

var _ dump.Store = (*Store)(nil)

// dumpPageSize is the procedures (or causes, decisions, turns, policies)
// one Dump read returns.
const dumpPageSize = 500

// Dump streams the store in pages, each a managed read transaction (read
// committed: for an exact copy, stop writers first; see dump.Store), with
// the recordings when opts.Recordings (dumpRecordings).
func (s *Store) Dump(ctx context.Context, sink dump.Sink, opts dump.DumpOptions) error {
	recs, err := query(ctx, s, "dump", neo4j.AccessModeRead, "dump_counts", nil)
	if err != nil {
		return err
	}
	if len(recs) != 1 {
		return s.mapError("dump", errRows("dump_counts", len(recs)))
	}
	n := func(k string) int64 { v, _ := field(recs[0], k).(int64); return v }
	counts := dump.Counts{
		dump.TypeCatalogue: 1, dump.TypeCause: n("causes"), dump.TypeProcedure: n("procedures"),
		dump.TypeVersion: n("versions"), dump.TypeUsage: n("usage"), dump.TypeEdge: n("edges"),
		dump.TypeDecision: n("decisions"), dump.TypeApproval: n("approvals"), dump.TypePolicy: n("policies"),
	}
	if opts.Recordings {
		counts[dump.TypeRecording] = n("recordings")
	}
	if err = sink.Begin(counts); err != nil {
		return err
	}
	cat, err := s.Catalogue(ctx)
	if err != nil {
		return err
	}
	if err := sink.Record(dump.Record{Type: dump.TypeCatalogue, Catalogue: cat}); err != nil {
		return err
	}
	causes := map[string]any{"after": ""}
	err = s.pages(ctx, "dump_causes", causes, func(rec *neo4j.Record) error {
		c := &dump.CauseRecord{}
		c.Name, _ = field(rec, "name").(string)
		c.Description, _ = field(rec, "description").(string)
		causes["after"] = c.Name
		return sink.Record(dump.Record{Type: dump.TypeCause, Cause: c})
	})
	if err != nil {
		return err
	}
	after := ""
	err = s.keyset(func() (int, error) {
		groups, err := readTx(ctx, s, "dump", func(ctx context.Context, tx neo4j.ManagedTransaction) ([][]dump.Record, error) {
			return dumpProcedures(ctx, tx, after, s.dumpPage)
		})
		if err != nil {
			return 0, err
		}
		var recorded *recordingIndex
		if opts.Recordings && len(groups) > 0 {
			if recorded, err = s.recordingIndex(ctx, groups); err != nil {
				return 0, err
			}
		}
		for _, g := range groups {
			for _, r := range g {
				if err := sink.Record(r); err != nil {
					return 0, err
				}
			}
			if recorded != nil {
				if err := s.dumpRecordings(ctx, recorded.of[g[0].Procedure.Name], sink); err != nil {
					return 0, err
				}
			}
			after = g[0].Procedure.Name
		}
		return len(groups), nil
	})
	if err != nil {
		return err
	}
	decisions := map[string]any{"at": time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), "id": ""}
	err = s.pages(ctx, "dump_decisions", decisions, func(rec *neo4j.Record) error {
		d, err := decodeDecision(field(rec, "decision"))
		if err != nil {
			return s.mapError("dump", err)
		}
		decisions["at"], decisions["id"] = d.At, d.ID
		return sink.Record(dump.Record{Type: dump.TypeDecision, Decision: &d})
	})
	if err != nil {
		return err
	}
	return s.dumpTurns(ctx, sink)
}

// dumpTurns emits every turn, then every session policy, by id.
func (s *Store) dumpTurns(ctx context.Context, sink dump.Sink) error {
	turns := map[string]any{"after": ""}
	err := s.pages(ctx, "dump_turns", turns, func(rec *neo4j.Record) error {
		t, err := decodeTurn(field(rec, "record"))
		if err != nil {
			return err
		}
		turns["after"], _ = field(rec, "id").(string)
		return sink.Record(dump.Record{Type: dump.TypeApproval, Approval: t})
	})
	if err != nil {
		return err
	}
	policies := map[string]any{"after": ""}
	return s.pages(ctx, "dump_policies", policies, func(rec *neo4j.Record) error {
		p, err := decodePolicy(field(rec, "record"))
		if err != nil {
			return err
		}
		policies["after"], _ = field(rec, "id").(string)
		return sink.Record(dump.Record{Type: dump.TypePolicy, Policy: dump.PolicyOf(p)})
	})
}

// pages runs the keyset-paged statement stmt (parameters: the cursor's and
// $limit) one page after another, calling fn on each record in order; fn
// moves the cursor past the record it was given (sets cursor's keys).
func (s *Store) pages(ctx context.Context, stmt string, cursor map[string]any, fn func(*neo4j.Record) error) error {
	return s.keyset(func() (int, error) {
		params := maps.Clone(cursor)
		params["limit"] = s.dumpPage
		recs, err := query(ctx, s, "dump", neo4j.AccessModeRead, stmt, params)
		if err != nil {
			return 0, err
		}
		for _, rec := range recs {
			if err := fn(rec); err != nil {
				return 0, err
			}
		}
		return len(recs), nil
	})
}

// keyset calls page, which reads and emits the page after its cursor and
// returns how many items it held, until a page is short of s.dumpPage (or
// fails).
func (s *Store) keyset(page func() (int, error)) error {
	for {
		n, err := page()
		if err != nil || n < s.dumpPage {
			return err
		}
	}
}

// dumpProcedures reads the page of limit procedure groups after after, in dump
// order (dump.Type).
func dumpProcedures(ctx context.Context, tx neo4j.ManagedTransaction, after string, limit int) ([][]dump.Record, error) {
	recs, err := collect(ctx, tx, "dump_procedures", map[string]any{"after": after, "limit": limit})
	if err != nil {
		return nil, err
	}
	groups := make([][]dump.Record, 0, len(recs))
	var owners []map[string]any
	for _, rec := range recs {
		r := &row{m: asMap(field(rec, "procedure"))}
		p := &dump.ProcedureRecord{
			Name: r.str("name"), Signature: r.strings("signature"), Summary: r.str("summary"),
			Frequency: r.int("frequency"), UseCount: r.int("use_count"), CreatedAt: r.time("created_at"),
			UpdatedAt: r.time("updated_at"), LastUsedAt: r.timePtr("last_used_at"), SearchParts: r.strings("search_parts"),
		}
		p.Current, _ = r.m["current"].(string)
		p.Demoted = r.m["demoted"] == true
		if r.m["grant_enabled"] != nil {
			p.Grant = &procedures.Grant{Enabled: r.bool("grant_enabled"), GrantedBy: r.str("grant_by"), GrantedAt: r.time("grant_at"),
				Reason: r.str("grant_reason"), CodeHash: r.str("grant_code_hash")}
			if s, ok := r.m["grant_binding"].(string); ok {
				b, err := decodeBinding(s)
				if err != nil {
					return nil, err
				}
				p.Grant.Binding = b
			}
		}
		if r.m["retired_at"] != nil {
			p.Retired = &procedures.Retirement{RetiredBy: r.str("retired_by"), RetiredAt: r.time("retired_at"), Reason: r.str("retired_reason")}
		}
		g := []dump.Record{{Type: dump.TypeProcedure, Procedure: p}}
		var versions []dump.Record
		for _, v := range r.list("versions") {
			dv, err := decodeVersion(v, "")
			if err != nil {
				return nil, err
			}
			versions = append(versions, dump.Record{Type: dump.TypeVersion, Version: &dump.VersionRecord{
				Procedure: p.Name, CodeHash: dv.CodeHash, Code: dv.Code, Dialect: dv.Dialect, Parameters: dv.Parameters,
				InputSchema: dv.InputSchema, Opaque: dv.Opaque, Warnings: dv.Warnings, Summary: dv.Summary, Metadata: dv.Metadata,
				CapturedAt: dv.CapturedAt, Frequency: dv.Frequency, Status: dv.Status,
				Health: dump.HealthRecordOf(dv.Health), Baseline: dv.Baseline,
			}})
			owners = append(owners, map[string]any{"scope": "version", "procedure": p.Name, "code_hash": dv.CodeHash, "cause": nil})
		}
		sort.Slice(versions, func(i, j int) bool { return versions[i].Version.CodeHash < versions[j].Version.CodeHash })
		g = append(g, versions...)
		owners = append(owners, map[string]any{"scope": "procedure", "procedure": p.Name, "code_hash": nil, "cause": nil})
		var edges []dump.Record
		for _, e := range r.list("edges") {
			er := &row{m: asMap(e)}
			edges = append(edges, dump.Record{Type: dump.TypeEdge, Edge: &dump.EdgeRecord{
				Cause: er.str("cause"), Procedure: p.Name, Frequency: er.int("frequency")}})
			owners = append(owners, map[string]any{"scope": "cause", "procedure": p.Name, "code_hash": nil, "cause": er.str("cause")})
			if er.err != nil {
				return nil, er.err
			}
		}
		sort.Slice(edges, func(i, j int) bool { return edges[i].Edge.Cause < edges[j].Edge.Cause })
		g = append(g, edges...)
		if r.err != nil {
			return nil, r.err
		}
		groups = append(groups, g)
	}
	if len(owners) == 0 {
		return groups, nil
	}
	keys, err := collect(ctx, tx, "dump_usage", map[string]any{"owners": owners})
	if err != nil {
		return nil, err
	}
	byProc := map[string][]dump.Record{}
	for _, k := range keys {
		u := &dump.UsageRecord{Procedure: field(k, "procedure").(string)}
		u.Key, _ = field(k, "key").(string)
		switch field(k, "scope") {
		case "version":
			u.Scope, u.CodeHash = dump.UsageVersion, field(k, "code_hash").(string)
		case "procedure":
			u.Scope = dump.UsageProcedure
		default:
			u.Scope, u.Cause = dump.UsageEdge, field(k, "cause").(string)
		}
		byProc[u.Procedure] = append(byProc[u.Procedure], dump.Record{Type: dump.TypeUsage, Usage: u})
	}
	for i, g := range groups {
		groups[i] = placeUsage(g, byProc[g[0].Procedure.Name])
	}
	return groups, nil
}

// placeUsage puts a group's usage keys where dump order wants them: version
// keys after the versions, procedure keys next, edge keys after the edges,
// each sorted.
func placeUsage(g, keys []dump.Record) []dump.Record {
	rank := func(u *dump.UsageRecord) (int, string) {
		switch u.Scope {
		case dump.UsageVersion:
			return 0, u.CodeHash + "\x00" + u.Key
		case dump.UsageProcedure:
			return 1, u.Key
		}
		return 2, u.Cause + "\x00" + u.Key
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, ki := rank(keys[i].Usage)
		rj, kj := rank(keys[j].Usage)
		if ri != rj {
			return ri < rj
		}
		return ki < kj
	})
	edgeStart := sort.Search(len(keys), func(i int) bool { r, _ := rank(keys[i].Usage); return r == 2 })
	edgesAt := len(g)
	for i, r := range g {
		if r.Type == dump.TypeEdge {
			edgesAt = i
			break
		}
	}
	out := make([]dump.Record, 0, len(g)+len(keys))
	out = append(out, g[:edgesAt]...)
	out = append(out, keys[:edgeStart]...)
	out = append(out, g[edgesAt:]...)
	out = append(out, keys[edgeStart:]...)
	return out
}

// DumpSource names the Neo4j store in a dump's header.
func (s *Store) DumpSource() string { return "neo4j" }

// recordingIndex is the recordings of a page of procedure groups, by
// procedure: each one's version, id and size, in dump order.
type recordingIndex struct {
	of map[string][]recordingEntry
}

type recordingEntry struct {
	procedure, codeHash, id string
	bytes                   int64
}

// maxRecordingBatchBytes bounds the recording bodies one dump read holds
// (dump_recording_bodies.cypher), maxRecordingBatch their number.
const (
	maxRecordingBatchBytes = 8 << 20
	maxRecordingBatch      = 500
)

// recordingIndex lists the recordings of groups' versions
// (dump_recordings.cypher): a recording of a version the group does not
// hold (captured after the group was read) is left out, so the dump holds
// no recording of a version it lacks.
func (s *Store) recordingIndex(ctx context.Context, groups [][]dump.Record) (*recordingIndex, error) {
	names := make([]string, len(groups))
	versions := map[string]bool{}
	for i, g := range groups {
		names[i] = g[0].Procedure.Name
		for _, r := range g {
			if r.Type == dump.TypeVersion {
				versions[r.Version.Procedure+"\x00"+r.Version.CodeHash] = true
			}
		}
	}
	recs, err := query(ctx, s, "dump", neo4j.AccessModeRead, "dump_recordings", map[string]any{"names": names})
	if err != nil {
		return nil, err
	}
	idx := &recordingIndex{of: map[string][]recordingEntry{}}
	for _, rec := range recs {
		r := &row{m: map[string]any{"procedure": field(rec, "procedure"), "code_hash": field(rec, "code_hash"),
			"id": field(rec, "id"), "bytes": field(rec, "bytes")}}
		e := recordingEntry{procedure: r.str("procedure"), codeHash: r.str("code_hash"), id: r.str("id"), bytes: r.int("bytes")}
		if r.err != nil {
			return nil, s.mapError("dump", r.err)
		}
		if versions[e.procedure+"\x00"+e.codeHash] {
			idx.of[e.procedure] = append(idx.of[e.procedure], e)
		}
	}
	return idx, nil
}

// dumpRecordings emits the recordings entries lists, reading their bodies
// in batches of at most maxRecordingBatchBytes (dump_recording_bodies.cypher);
// one deleted since it was listed is left out.
func (s *Store) dumpRecordings(ctx context.Context, entries []recordingEntry, sink dump.Sink) error {
	for len(entries) > 0 {
		n, size := 0, int64(0)
		for n < len(entries) && n < maxRecordingBatch && (n == 0 || size+entries[n].bytes <= maxRecordingBatchBytes) {
			size += entries[n].bytes
			n++
		}
		batch := entries[:n]
		entries = entries[n:]
		ids := make([]string, len(batch))
		for i, e := range batch {
			ids[i] = e.id
		}
		recs, err := query(ctx, s, "dump", neo4j.AccessModeRead, "dump_recording_bodies", map[string]any{"ids": ids})
		if err != nil {
			return err
		}
		byID := make(map[string]*neo4j.Record, len(recs))
		for _, rec := range recs {
			id, _ := field(rec, "id").(string)
			byID[id] = rec
		}
		for _, e := range batch {
			rec, ok := byID[e.id]
			if !ok {
				continue
			}
			r := &row{m: map[string]any{"recorded_at": field(rec, "recorded_at"), "content_hash": field(rec, "content_hash"), "body": field(rec, "body")}}
			d := &dump.RecordingRecord{Procedure: e.procedure, CodeHash: e.codeHash, ID: e.id, RecordedAt: r.time("recorded_at"),
				ContentHash: r.str("content_hash"), Body: []byte(r.str("body"))}
			if r.err != nil {
				return s.mapError("dump", r.err)
			}
			if err := sink.Record(dump.Record{Type: dump.TypeRecording, Recording: d}); err != nil {
				return err
			}
		}
	}
	return nil
}
