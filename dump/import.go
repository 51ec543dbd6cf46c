package dump

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/recording"
)

// ImportOptions configures Import.
type ImportOptions struct {
	// BatchSize is the number of records per store transaction; 0 means
	// DefaultImportBatch.
	BatchSize int
	// Progress, when set, is called after each batch with the records
	// applied so far (skipped ones included) and the dump's total.
	Progress func(done, total int64)
	// Validated, when set, is called once the whole dump has been checked,
	// before anything is written.
	Validated func(h HeaderRecord, t TrailerRecord)
	// Merge merges the dump into a store that may hold data (docs/dumps.md
	// "Merging") instead of loading it into an empty one.
	Merge bool
	// Restore names the import a restore of a backup (procgraph restore
	// --store neo4j): its audit record's reason is ReasonRestored instead
	// of ReasonImported. It loads into an empty store only (not with Merge).
	Restore bool
	// Audit, when set, builds the import's audit record (StoreDecision:
	// reason imported or merged, by Actor, ImportNote), which is committed
	// with the last batch: an import that completes holds it, one that
	// fails before its last batch does not (a resumed one records it when
	// it completes). Actor is checked before anything is written.
	Audit *procedures.Recorder
	Actor string
	// TrustAuthorizations keeps the dump's session policies and durable
	// grants as dumped (--trust-authorizations); without it they arrive
	// inactive (admission). The import's audit then holds a second record,
	// reason ReasonAuthorizationsTrusted, by Actor (procgraph import always
	// audits).
	TrustAuthorizations bool
	// ApprovalTimeout and Pending are the target's approval timeout and
	// pending bounds, which the admitted turns keep to
	// (DefaultApprovalTimeout, DefaultMaxPendingApprovals and
	// DefaultMaxPendingPerRequester when 0); Now is the import's time
	// (time.Now when nil).
	ApprovalTimeout time.Duration
	Pending         gate.PendingBounds
	Now             func() time.Time
	// RecordingsPerVersion is the target's --recordings-per-version: the
	// recordings each version keeps once the dump's are added, the newest
	// (recording.DefaultRecordingsPerVersion when 0).
	RecordingsPerVersion int
}

// DefaultImportBatch is the records per import transaction by default
// (into Neo4j 5000 took a third less time than 1000 at 10k procedures).
const DefaultImportBatch = 5000

// MaxImportBatchBytes bounds the dump bytes of one import transaction: a
// batch is applied early when its records reach it (large versions), so
// memory stays flat whatever the dump holds.
const MaxImportBatchBytes = 32 << 20

// ImportSummary is what an import did.
type ImportSummary struct {
	Header  HeaderRecord
	Trailer TrailerRecord
	// Resumed is the last line an earlier, interrupted import of the same
	// dump had applied (0 for a fresh import).
	Resumed int64
	// Applied counts the records this run applied, by type.
	Applied Counts
	// Merged says the dump was merged into the store.
	Merged bool
	// CatalogueKept is set when a merge kept the store's catalogue, which
	// differs from the dump's (revisions TargetRevision, DumpRevision).
	CatalogueKept                bool
	TargetRevision, DumpRevision string
}

// Import loads the dump that open returns into s. It reads the dump twice:
// first it validates all of it (a truncated, reordered, repeated or corrupt
// dump is refused, naming the line, before anything is written), then it
// applies it in batches, each in one transaction with the store's progress
// marker. The store must be empty, or hold the marker of an earlier import
// of this same dump (identified by its checksum), which is then resumed
// after its last applied line. With opts.Merge the store may hold data:
// the dump is merged into it (docs/dumps.md "Merging"), after a third read that
// refuses, before anything is written, a procedure the store holds under
// another signature. Returns fault.CodeConflict for a store that is not empty
// (without Merge), is importing another dump or holds a conflicting
// procedure, fault.CodeInvalid for a bad dump.
func Import(ctx context.Context, s Target, open func() (io.ReadCloser, error), opts ImportOptions) (ImportSummary, error) {
	var sum ImportSummary
	batch := opts.BatchSize
	if batch <= 0 {
		batch = DefaultImportBatch
	}
	if opts.RecordingsPerVersion == 0 {
		opts.RecordingsPerVersion = recording.DefaultRecordingsPerVersion
	}
	if err := recording.CheckRecordingsPerVersion(opts.RecordingsPerVersion); err != nil {
		return sum, fault.Errorf(fault.CodeInvalid, "%v", err)
	}
	if opts.Restore && opts.Merge {
		return sum, fault.Errorf(fault.CodeInvalid, "a restore loads into an empty store: it cannot merge")
	}
	f, err := open()
	if err != nil {
		return sum, err
	}
	sum.Header, sum.Trailer, err = Validate(f)
	_ = f.Close()
	if err != nil {
		return sum, err
	}
	if opts.Validated != nil {
		opts.Validated(sum.Header, sum.Trailer)
	}
	id := sum.Trailer.SHA256
	sum.Merged = opts.Merge
	m, err := s.LoadState(ctx)
	if err != nil {
		return sum, err
	}
	switch {
	case m != nil && m.DumpID != id:
		return sum, fault.Errorf(fault.CodeConflict, "the store holds an unfinished import of another dump (%s); finish that one first", m.DumpID)
	case m != nil && m.Merge != opts.Merge:
		return sum, fault.Errorf(fault.CodeConflict, "the store holds an unfinished %s of this dump: resume it %s --merge", mode(m.Merge), map[bool]string{true: "with", false: "without"}[m.Merge])
	case m != nil:
		sum.Resumed = m.Line
	case !opts.Merge:
		empty, err := s.Empty(ctx)
		if err != nil {
			return sum, err
		}
		if !empty {
			return sum, fault.Errorf(fault.CodeConflict, "the target store is not empty: import only into an empty store (or merge into it with --merge)")
		}
	}
	reason := map[bool]string{false: audit.ReasonImported, true: audit.ReasonMerged}[opts.Merge]
	if opts.Restore {
		reason = audit.ReasonRestored
	}
	if opts.Audit != nil {
		if _, err := opts.Audit.Build(audit.StoreDecision(reason, opts.Actor, "")); err != nil {
			return sum, err
		}
	}
	if opts.Audit != nil && opts.TrustAuthorizations {
		if _, err := opts.Audit.Build(audit.StoreDecision(audit.ReasonAuthorizationsTrusted, opts.Actor, TrustNote)); err != nil {
			return sum, err
		}
	}
	if opts.Merge {
		if err := checkMerge(ctx, s, open, &sum, batch); err != nil {
			return sum, err
		}
	}
	adm, err := newAdmission(ctx, s, opts)
	if err != nil {
		return sum, err
	}
	if f, err = open(); err != nil {
		return sum, err
	}
	defer f.Close()
	d, err := NewReader(f)
	if err != nil {
		return sum, err
	}
	sum.Applied = Counts{}
	var recs []Record
	// flush loads recs and extra (the audit record: loaded, not counted).
	flush := func(line int64, extra ...Record) error {
		if len(recs)+len(extra) == 0 {
			return nil
		}
		if err := s.Load(ctx, LoadMarker{DumpID: id, Line: line, Merge: opts.Merge}, append(recs, extra...)); err != nil {
			return err
		}
		for _, r := range recs {
			sum.Applied[r.Type]++
		}
		recs = recs[:0]
		if opts.Progress != nil {
			opts.Progress(line-1, sum.Trailer.Records)
		}
		return nil
	}
	last, bytes := int64(1), 0
	for {
		r, err := d.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return sum, err
		}
		last = d.Line()
		if last <= sum.Resumed {
			continue
		}
		recs = append(recs, adm.admit(r))
		bytes += d.LineBytes()
		if len(recs) >= batch || bytes >= MaxImportBatchBytes {
			if err := flush(last); err != nil {
				return sum, err
			}
			bytes = 0
		}
	}
	if d.Trailer().SHA256 != id {
		return sum, fault.Errorf(fault.CodeInvalid, "the dump changed while it was imported")
	}
	if opts.Audit == nil {
		err = flush(last)
	} else {
		applied := maps.Clone(sum.Applied)
		for _, r := range recs {
			applied[r.Type]++
		}
		_, err = opts.Audit.RecordWith(audit.StoreDecision(reason, opts.Actor, ImportNote(sum, applied)), func(rec audit.Decision) error {
			done := Record{Type: TypeDecision, Decision: &rec}
			if !opts.TrustAuthorizations {
				return flush(last, done)
			}
			_, err := opts.Audit.RecordWith(audit.StoreDecision(audit.ReasonAuthorizationsTrusted, opts.Actor, TrustNote), func(trust audit.Decision) error {
				return flush(last, done, Record{Type: TypeDecision, Decision: &trust})
			})
			return err
		})
	}
	if err != nil {
		return sum, err
	}
	if opts.Progress != nil {
		opts.Progress(sum.Trailer.Records, sum.Trailer.Records)
	}
	return sum, s.FinishLoad(ctx, id)
}

func mode(merge bool) string {
	if merge {
		return "merge"
	}
	return "import"
}

// checkMerge reads the dump once more before a merge writes anything: a
// procedure the store holds under another signature refuses the merge,
// naming its line; the store's catalogue is compared with the dump's
// (the store's is kept).
func checkMerge(ctx context.Context, s Target, open func() (io.ReadCloser, error), sum *ImportSummary, batch int) error {
	f, err := open()
	if err != nil {
		return err
	}
	defer f.Close()
	d, err := NewReader(f)
	if err != nil {
		return err
	}
	target, err := s.Catalogue(ctx)
	if err != nil {
		return err
	}
	var procs []*ProcedureRecord
	lines := map[string]int64{}
	check := func() error {
		if len(procs) == 0 {
			return nil
		}
		name, err := s.MergeConflict(ctx, procs)
		if err != nil {
			return err
		}
		if name != "" {
			return fault.Errorf(fault.CodeConflict, "dump line %d: procedure %s is stored with another signature; nothing was merged", lines[name], name).
				WithDetails("line", lines[name])
		}
		procs, lines = procs[:0], map[string]int64{}
		return nil
	}
	for {
		r, err := d.Next()
		if errors.Is(err, io.EOF) {
			return check()
		}
		if err != nil {
			return err
		}
		switch r.Type {
		case TypeCatalogue:
			if len(target.Tools) > 0 && target.Revision != r.Catalogue.Revision {
				sum.CatalogueKept, sum.TargetRevision, sum.DumpRevision = true, target.Revision, r.Catalogue.Revision
			}
		case TypeProcedure:
			procs = append(procs, r.Procedure)
			lines[r.Procedure.Name] = d.Line()
			if len(procs) >= batch {
				if err := check(); err != nil {
					return err
				}
			}
		}
	}
}

// ImportNote is the note of an import's or merge's audit record: the
// dump's checksum and format, what this run applied of what the dump holds,
// by type, and the line it resumed after.
func ImportNote(sum ImportSummary, applied Counts) string {
	var b strings.Builder
	fmt.Fprintf(&b, "dump sha256 %s, format %d; applied", sum.Trailer.SHA256, sum.Header.Format)
	for i, t := range CountTypes {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " %s %d of %d", t, applied[t], sum.Trailer.Counts[t])
	}
	if sum.Resumed > 0 {
		fmt.Fprintf(&b, "; resumed after line %d", sum.Resumed)
	}
	return b.String()
}

// TrustNote is the note of the audit record (reason
// ReasonAuthorizationsTrusted) of an import that kept the dump's
// authorizations: what was kept, never which.
const TrustNote = "the dump's session policies and durable grants were kept as dumped (--trust-authorizations)"
