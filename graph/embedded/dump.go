package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
)

var _ dump.Store = (*Store)(nil)

// metaImport keeps the import in progress (dump.LoadMarker, JSON).
var metaImport = []byte("import")

// Dump streams the whole store from one read transaction: a consistent
// snapshot while writers carry on (see dump.Store).
func (s *Store) Dump(ctx context.Context, sink dump.Sink, opts dump.DumpOptions) error {
	return s.view(ctx, func(tx *bolt.Tx) error {
		counts, err := dumpCounts(tx, opts)
		if err != nil {
			return err
		}
		if err := sink.Begin(counts); err != nil {
			return err
		}
		cat, err := s.catalogueIn(tx)
		if err != nil {
			return err
		}
		if err := sink.Record(dump.Record{Type: dump.TypeCatalogue, Catalogue: cat}); err != nil {
			return err
		}
		err = tx.Bucket(bCauses).ForEach(func(k, v []byte) error {
			var c causeRecord
			if err := decode(v, &c, "cause "+string(k)); err != nil {
				return err
			}
			return sink.Record(dump.Record{Type: dump.TypeCause, Cause: &dump.CauseRecord{Name: string(k), Description: c.Description}})
		})
		if err != nil {
			return err
		}
		if err := tx.Bucket(bProcs).ForEach(func(k, v []byte) error { return dumpProcedure(tx, k, v, sink, opts) }); err != nil {
			return err
		}
		err = tx.Bucket(bDecisions).ForEach(func(_, v []byte) error {
			var d audit.Decision
			if err := decode(v, &d, "decision"); err != nil {
				return err
			}
			return sink.Record(dump.Record{Type: dump.TypeDecision, Decision: &d})
		})
		if err != nil {
			return err
		}
		err = tx.Bucket(bTurns).ForEach(func(_, v []byte) error {
			var r gate.TurnRecord
			if err := decode(v, &r, "turn"); err != nil {
				return err
			}
			return sink.Record(dump.Record{Type: dump.TypeApproval, Approval: &r})
		})
		if err != nil {
			return err
		}
		return tx.Bucket(bPolicies).ForEach(func(_, v []byte) error {
			p, err := decodePolicy(v)
			if err != nil {
				return err
			}
			return sink.Record(dump.Record{Type: dump.TypePolicy, Policy: dump.PolicyOf(p)})
		})
	})
}

// dumpCounts counts the records a dump of tx holds.
func dumpCounts(tx *bolt.Tx, opts dump.DumpOptions) (dump.Counts, error) {
	n := func(b []byte) int64 { return int64(tx.Bucket(b).Stats().KeyN) }
	c := dump.Counts{
		dump.TypeCatalogue: 1,
		dump.TypeCause:     n(bCauses),
		dump.TypeProcedure: n(bProcs),
		dump.TypeVersion:   n(bVersions),
		dump.TypeUsage:     n(bKeysProc) + n(bKeysVersion) + n(bKeysEdge),
		dump.TypeEdge:      n(bEdgesPC),
		dump.TypeDecision:  n(bDecisions),
		dump.TypeApproval:  n(bTurns),
		dump.TypePolicy:    n(bPolicies),
	}
	if opts.Recordings {
		c[dump.TypeRecording] = n(bRecordings)
	}
	return c, nil
}

// dumpProcedure emits one procedure group (dump.Type), with its
// versions' recordings when opts.Recordings.
func dumpProcedure(tx *bolt.Tx, k, v []byte, sink dump.Sink, opts dump.DumpOptions) error {
	name := string(k)
	var rec procRecord
	if err := decode(v, &rec, "procedure "+name); err != nil {
		return err
	}
	p := &dump.ProcedureRecord{
		Name: name, Signature: rec.Signature, Summary: rec.Summary, Current: rec.Current,
		Frequency: rec.Frequency, UseCount: rec.UseCount, CreatedAt: fromMs(rec.CreatedAt), UpdatedAt: fromMs(rec.UpdatedAt),
		Demoted: rec.Demoted,
	}
	if rec.LastUsedAt != nil {
		t := fromMs(*rec.LastUsedAt)
		p.LastUsedAt = &t
	}
	if rec.Retired != nil {
		p.Retired = &procedures.Retirement{RetiredBy: rec.Retired.By, RetiredAt: fromMs(rec.Retired.At), Reason: rec.Retired.Reason}
	}
	if v := tx.Bucket(bSearch).Get(k); v != nil {
		if err := decode(v, &p.SearchParts, "search parts of "+name); err != nil {
			return err
		}
	}
	if g := tx.Bucket(bGrants).Get(k); g != nil {
		p.Grant = new(procedures.Grant)
		if err := decode(g, p.Grant, "grant of "+name); err != nil {
			return err
		}
	}
	if err := sink.Record(dump.Record{Type: dump.TypeProcedure, Procedure: p}); err != nil {
		return err
	}
	err := scanPrefix(tx.Bucket(bVersions), prefix(name), func(_, v []byte) error {
		var r versionRecord
		if err := decode(v, &r, "version of "+name); err != nil {
			return err
		}
		h, err := versionHealth(tx, key(name, r.CodeHash), &r)
		if err != nil {
			return err
		}
		r.Health = h
		return sink.Record(dump.Record{Type: dump.TypeVersion, Version: &dump.VersionRecord{
			Procedure: name, CodeHash: r.CodeHash, Code: r.Code, Dialect: r.Dialect, Parameters: r.Parameters,
			InputSchema: r.InputSchema, Opaque: r.Opaque, Warnings: r.Warnings, Summary: r.Summary, Metadata: r.Metadata,
			CapturedAt: fromMs(r.CapturedAt), Frequency: r.Frequency, Status: r.Status,
			Health: dump.HealthRecordOf(health.HealthOf(r.Health)), Baseline: r.Baseline,
		}})
	})
	if err != nil {
		return err
	}
	usage := func(u dump.UsageRecord) error {
		return sink.Record(dump.Record{Type: dump.TypeUsage, Usage: &u})
	}
	err = scanPrefix(tx.Bucket(bKeysVersion), prefix(name), func(rest, _ []byte) error {
		hash, key := split2(rest)
		return usage(dump.UsageRecord{Scope: dump.UsageVersion, Procedure: name, CodeHash: hash, Key: key})
	})
	if err != nil {
		return err
	}
	err = scanPrefix(tx.Bucket(bKeysProc), prefix(name), func(rest, _ []byte) error {
		return usage(dump.UsageRecord{Scope: dump.UsageProcedure, Procedure: name, Key: string(rest)})
	})
	if err != nil {
		return err
	}
	var causes []string
	err = scanPrefix(tx.Bucket(bEdgesPC), prefix(name), func(rest, v []byte) error {
		causes = append(causes, string(rest))
		return sink.Record(dump.Record{Type: dump.TypeEdge, Edge: &dump.EdgeRecord{
			Cause: string(rest), Procedure: name, Frequency: int64(getU64(v))}})
	})
	if err != nil {
		return err
	}
	for _, c := range causes {
		err = scanPrefix(tx.Bucket(bKeysEdge), prefix(c, name), func(rest, _ []byte) error {
			return usage(dump.UsageRecord{Scope: dump.UsageEdge, Procedure: name, Cause: c, Key: string(rest)})
		})
		if err != nil {
			return err
		}
	}
	if !opts.Recordings {
		return nil
	}
	return scanPrefix(tx.Bucket(bRecordings), prefix(name), func(rest, v []byte) error {
		hash, id := split2(rest)
		if len(v) < recHead || tx.Bucket(bVersions).Get(key(name, hash)) == nil {
			return fault.Errorf(fault.CodeInternal, "embedded store: a stored recording of %s is corrupt", name)
		}
		return sink.Record(dump.Record{Type: dump.TypeRecording, Recording: &dump.RecordingRecord{
			Procedure: name, CodeHash: hash, ID: id, RecordedAt: fromMs(int64(getU64(v[:8]))),
			ContentHash: string(v[8:recHead]), Body: bytes.Clone(v[recHead:])}})
	})
}

// split2 splits "a 0 b" at its first 0 byte (a usage key, the last part,
// may hold more).
func split2(b []byte) (string, string) {
	for i, c := range b {
		if c == 0 {
			return string(b[:i]), string(b[i+1:])
		}
	}
	return string(b), ""
}

// Empty reports whether the store holds nothing (see dump.Store).
func (s *Store) Empty(ctx context.Context) (bool, error) {
	empty := false
	err := s.view(ctx, func(tx *bolt.Tx) error {
		cat, err := s.catalogueIn(tx)
		if err != nil {
			return err
		}
		first := func(b []byte) bool { k, _ := tx.Bucket(b).Cursor().First(); return k == nil }
		empty = len(cat.Tools) == 0 && first(bProcs) && first(bCauses) && first(bTurns) && first(bPolicies)
		if empty {
			empty, err = onlyTokenDecisions(tx)
		}
		return err
	})
	return empty, err
}

// onlyTokenDecisions reports whether every audit record tx holds is about
// a token (a store's tokens are not its data: Empty).
func onlyTokenDecisions(tx *bolt.Tx) (bool, error) {
	c := tx.Bucket(bDecisions).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		var d struct {
			Kind audit.DecisionKind `json:"kind"`
		}
		if err := decode(v, &d, "decision"); err != nil {
			return false, err
		}
		if d.Kind != audit.KindToken {
			return false, nil
		}
	}
	return true, nil
}

// LoadState returns the import in progress (see dump.Store).
func (s *Store) LoadState(ctx context.Context) (*dump.LoadMarker, error) {
	var m *dump.LoadMarker
	err := s.view(ctx, func(tx *bolt.Tx) (err error) {
		m, err = loadMarker(tx)
		return err
	})
	return m, err
}

// LoadStateOf is the import marker of the closed store file at path (nil
// when it holds none), read without opening the store (no search index, no
// indexer): what an offline command that takes the file as it is
// (procgraph compact) checks first. CodeNotFound when there is no file,
// CodeUnavailable when another process holds it (after lockTimeout) or it
// is not a store file.
func LoadStateOf(path string, lockTimeout time.Duration) (m *dump.LoadMarker, err error) {
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fault.Errorf(fault.CodeNotFound, "embedded store %s does not exist", path)
		}
		return nil, fault.Errorf(fault.CodeUnavailable, "embedded store %s: %v", path, err)
	}
	if lockTimeout <= 0 {
		lockTimeout = DefaultLockTimeout
	}
	defer func() {
		if r := recover(); r != nil {
			err = fault.Errorf(fault.CodeUnavailable, "embedded store %s is corrupt: %v", path, r)
		}
	}()
	o := boltOptions(lockTimeout, false)
	o.ReadOnly = true
	db, err := bolt.Open(path, 0o600, o)
	if err != nil {
		return nil, openError(path, lockTimeout, err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bMeta) == nil {
			return fault.Errorf(fault.CodeUnavailable, "embedded store %s is not a procgraph store file (no %s bucket)", path, bMeta)
		}
		m, err = loadMarker(tx)
		return err
	})
	return m, err
}

func loadMarker(tx *bolt.Tx) (*dump.LoadMarker, error) {
	v := tx.Bucket(bMeta).Get(metaImport)
	if v == nil {
		return nil, nil
	}
	var m dump.LoadMarker
	if err := decode(v, &m, "import marker"); err != nil {
		return nil, err
	}
	return &m, nil
}

// Load applies dump records and moves the marker, in one transaction (see
// dump.Store). Procedures are written without rank entries or
// classification: FinishLoad builds them. Their search parts go to the
// search bucket with the generation bumped, and into the search index
// after the commit, as a capture's do (search.go).
func (s *Store) Load(ctx context.Context, m dump.LoadMarker, recs []dump.Record) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	var docs searchDocs
	err = s.update(ctx, func(tx *bolt.Tx) error {
		docs = searchDocs{}
		old, err := loadMarker(tx)
		if err != nil {
			return err
		}
		if old != nil && (old.DumpID != m.DumpID || old.Merge != m.Merge) {
			return fault.Errorf(fault.CodeConflict, "another import (%s) is in progress", old.DumpID)
		}
		if old != nil && old.Line >= m.Line {
			return nil // this batch committed with the marker already
		}
		apply := s.loadRecord
		if m.Merge {
			apply = s.mergeRecord
		}
		for _, r := range recs {
			if err := apply(tx, r, &docs); err != nil {
				return err
			}
		}
		if err := bumpAuth(tx); err != nil {
			return err
		}
		return tx.Bucket(bMeta).Put(metaImport, b)
	})
	if err != nil {
		return err
	}
	s.indexDocs(&docs)
	return nil
}

// finishBatch is the number of procedures FinishLoad classifies per
// transaction: a write transaction holds its dirty pages in memory.
const finishBatch = 5_000

// FinishLoad classifies every procedure, builds the rank index and class
// counts and removes the marker (see dump.Store), finishBatch
// procedures per transaction; the marker stays until the last, so an
// interrupted finish is done again whole by the resumed import.
func (s *Store) FinishLoad(ctx context.Context, dumpID string) error {
	check := func(tx *bolt.Tx) error {
		m, err := loadMarker(tx)
		if err != nil {
			return err
		}
		if m == nil || m.DumpID != dumpID {
			return fault.Errorf(fault.CodeConflict, "no import of dump %s in progress", dumpID)
		}
		return nil
	}
	err := s.update(ctx, func(tx *bolt.Tx) error {
		if err := check(tx); err != nil {
			return err
		}
		return resetClassCounts(tx)
	})
	if err != nil {
		return err
	}
	for after, more := []byte(nil), true; more; {
		err := s.update(ctx, func(tx *bolt.Tx) error {
			var names []string
			c := tx.Bucket(bProcs).Cursor()
			k, _ := c.First()
			if after != nil {
				if k, _ = c.Seek(after); k != nil && string(k) == string(after) {
					k, _ = c.Next()
				}
			}
			for ; k != nil && len(names) < finishBatch; k, _ = c.Next() {
				names = append(names, string(k))
			}
			more = len(names) == finishBatch
			if len(names) > 0 {
				after = []byte(names[len(names)-1])
			}
			return s.reclassifyNames(tx, names)
		})
		if err != nil {
			return err
		}
	}
	return s.update(ctx, func(tx *bolt.Tx) error {
		if err := check(tx); err != nil {
			return err
		}
		return tx.Bucket(bMeta).Delete(metaImport)
	})
}

// DumpSource names the embedded store in a dump's header.
func (s *Store) DumpSource() string { return "embedded" }

// Backup writes a consistent copy of the store's file to w from one read
// transaction (bbolt's Tx.WriteTo): writers carry on meanwhile. The copy is
// a store file: stop procgraph, put it in place of the old one, start.
func (s *Store) Backup(ctx context.Context, w io.Writer) (int64, error) {
	var n int64
	err := s.view(ctx, func(tx *bolt.Tx) error {
		var err error
		if n, err = tx.WriteTo(w); err != nil {
			return fault.Errorf(fault.CodeUnavailable, "backup: writing the copy: %v", err)
		}
		return nil
	})
	return n, err
}

var _ procedures.BackupStore = (*Store)(nil)
