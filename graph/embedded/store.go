// Package embedded is the default procedures.Store: the whole graph in one
// bbolt file, for one machine. Every write is one bbolt read-write
// transaction, which bbolt serialises, so counts are exact under concurrency
// and a crash loses nothing that was acknowledged.
package embedded

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
)

// Options configures Open.
type Options struct {
	// LockTimeout is how long Open waits for another process that holds the
	// file; 0 means DefaultLockTimeout.
	LockTimeout time.Duration
	// Logger receives the store's logs; the zero value discards them.
	Logger zerolog.Logger
	// NoSync skips fsync after each commit: faster, but a crash of the
	// machine may lose acknowledged writes. For tests and benchmarks only.
	NoSync bool
	// indexDelay replaces decisionIndexDelay (tests: an hour holds the
	// decision indexer until Close).
	indexDelay time.Duration
}

// batchDelay is how long a batch of concurrent writers waits for more.
const batchDelay = time.Millisecond

// DefaultLockTimeout is how long Open waits for the file lock by default.
const DefaultLockTimeout = 5 * time.Second

// Store is the embedded procedures.Store. It is safe for concurrent use.
type Store struct {
	db     *bolt.DB
	path   string
	log    zerolog.Logger
	closed atomic.Bool
	// decIndexer writes audit records' index entries behind them
	// (decindex.go).
	decIndexer *decisionIndexer
	// writers counts Capture and RecordUse calls in flight: while one
	// commits, the others join a bbolt batch, so concurrent writers share
	// one transaction and one fsync.
	writers atomic.Int32
	// commits counts the read-write transactions committed since Open
	// (Commits); lastTx is the last one counted, so that a batch of
	// writers sharing one transaction counts once.
	commits atomic.Int64
	lastTx  atomic.Pointer[bolt.Tx]
	// search is the relevance search index (search.go).
	search *searchIndex
	// decodeCaches are the read path's decoded records (records.go).
	decodeCaches
	// catalogues is the last catalogue decoded (catalogue.go), this
	// store's own.
	catalogues catalogueCache
}

// The store implements procedures.Store and each of its areas (checked
// at compile time).
var (
	_ procedures.Store          = (*Store)(nil)
	_ procedures.ProcedureStore = (*Store)(nil)
	_ procedures.CauseStore     = (*Store)(nil)
	_ procedures.CatalogueStore = (*Store)(nil)
	_ procedures.GrantStore     = (*Store)(nil)
	_ procedures.DecisionStore  = (*Store)(nil)
	_ procedures.RunStore       = (*Store)(nil)
	_ procedures.DriftStore     = (*Store)(nil)
)

// Open opens (creating if needed) the store file at path. It returns
// CodeUnavailable when the file is locked by another process past the lock
// timeout, cannot be opened, or is not a valid procgraph store.
func Open(path string, opts Options) (s *Store, err error) {
	if path == "" {
		return nil, fault.Errorf(fault.CodeInvalid, "embedded store: no file path")
	}
	timeout := opts.LockTimeout
	if timeout <= 0 {
		timeout = DefaultLockTimeout
	}
	defer func() {
		if r := recover(); r != nil {
			err = fault.Errorf(fault.CodeUnavailable, "embedded store %s is corrupt: %v", path, r)
		}
	}()
	db, err := bolt.Open(path, 0o600, boltOptions(timeout, opts.NoSync))
	if err != nil {
		return nil, openError(path, timeout, err)
	}
	db.MaxBatchDelay = batchDelay
	s = &Store{db: db, path: path, decodeCaches: newDecodeCaches(), log: opts.Logger.With().Str("store", "embedded").Str("path", path).Logger()}
	if err := s.prepare(); err != nil {
		_ = db.Close()
		if fault.ErrorCode(err) == fault.CodeInternal { // a record its upgrades read is corrupt
			err = fault.Errorf(fault.CodeUnavailable, "embedded store %s cannot be opened: %s", path, fault.ErrorMessage(err))
		}
		return nil, err
	}
	if err := s.openSearch(SearchIndexPath(path)); err != nil {
		_ = db.Close()
		return nil, fault.Errorf(fault.CodeUnavailable, "embedded store %s: search index %s.search cannot be opened: %v", path, path, err)
	}
	s.startDecisionIndexer(cmp.Or(opts.indexDelay, decisionIndexDelay))
	s.log.Debug().Msg("store opened")
	return s, nil
}

// boltOptions are the bbolt options of every file the store opens (Open,
// Compact): its lock's timeout and whether commits skip fsync.
func boltOptions(timeout time.Duration, noSync bool) *bolt.Options {
	return &bolt.Options{
		Timeout: timeout,
		NoSync:  noSync,
		// The array freelist is kept sorted; the hash-map one sorts every
		// free page id at each commit, which grew a write's cost with the
		// file (docs/benchmarks.md, BenchmarkRequestGrowth). The type is
		// in memory only: the file's freelist page is the same.
		FreelistType: bolt.FreelistArrayType,
	}
}

func openError(path string, timeout time.Duration, err error) error {
	switch {
	case errors.Is(err, bolterrors.ErrTimeout):
		return fault.Errorf(fault.CodeUnavailable,
			"embedded store %s is locked by another process (waited %v): stop it or use another file", path, timeout)
	case errors.Is(err, bolterrors.ErrInvalid), errors.Is(err, bolterrors.ErrChecksum),
		errors.Is(err, bolterrors.ErrVersionMismatch), errors.Is(err, bolterrors.ErrInvalidMapping):
		return fault.Errorf(fault.CodeUnavailable,
			"embedded store %s is not a valid procgraph store file (%v)", path, err)
	case errors.Is(err, os.ErrPermission):
		return fault.Errorf(fault.CodeUnavailable, "embedded store %s: permission denied", path)
	default:
		return fault.Errorf(fault.CodeUnavailable, "embedded store %s cannot be opened: %v", path, err)
	}
}

// prepare creates the buckets of a new file and checks the schema of an old one.
func (s *Store) prepare() error {
	return s.mapErr(s.db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bMeta)
		if meta == nil {
			foreign := false
			_ = tx.ForEach(func([]byte, *bolt.Bucket) error { foreign = true; return nil })
			if foreign {
				return fault.Errorf(fault.CodeUnavailable, "embedded store %s is a bbolt file of something else, not a procgraph store", s.path)
			}
		} else if v := meta.Get(metaSchema); string(v) != schemaVersion && string(v) != schemaIndexedInline && string(v) != schemaNoToolCounts && string(v) != schemaUnclassified {
			return fault.Errorf(fault.CodeUnavailable, "embedded store %s has schema %q; this procgraph reads schema %q", s.path, v, schemaVersion)
		}
		var from string
		if meta != nil {
			from = string(meta.Get(metaSchema))
		}
		for _, name := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		switch from {
		case schemaUnclassified:
			if err := s.reclassifyAll(tx); err != nil {
				return err
			}
		case schemaNoToolCounts:
			if err := countToolsAll(tx); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bMeta).Put(metaSchema, []byte(schemaVersion)); err != nil {
			return err
		}
		if err := upgradeDecisionIndex(tx); err != nil {
			return err
		}
		if err := s.upgradeBaselines(tx); err != nil {
			return err
		}
		return s.upgradeCanonical(tx)
	}))
}

// Close releases the file. A second Close does nothing.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.log.Debug().Msg("store closed")
	s.stopDecisionIndexer()
	serr := s.closeSearch()
	if err := s.mapErr(s.db.Close()); err != nil {
		return err
	}
	return serr
}

// Ping checks that the store is open and its file readable.
func (s *Store) Ping(ctx context.Context) error {
	return s.view(ctx, func(tx *bolt.Tx) error {
		if tx.Bucket(bMeta) == nil {
			return fault.Errorf(fault.CodeUnavailable, "embedded store %s lost its buckets", s.path)
		}
		return nil
	})
}

// Path returns the file the store keeps.
func (s *Store) Path() string { return s.path }

// Synced reports whether every commit is fsynced before it is acknowledged
// (the store was opened without Options.NoSync).
func (s *Store) Synced() bool { return !s.db.NoSync }

func (s *Store) view(ctx context.Context, fn func(tx *bolt.Tx) error) error {
	return s.run(ctx, s.db.View, fn)
}

func (s *Store) update(ctx context.Context, fn func(tx *bolt.Tx) error) error {
	return s.run(ctx, s.db.Update, s.counted(fn))
}

// Commits returns how many read-write transactions the store committed
// since Open (each one fsync unless Options.NoSync): what the figures and
// tests of a request's durable writes count.
func (s *Store) Commits() int64 { return s.commits.Load() }

// counted is fn counting its transaction's commit in Commits, once per
// transaction (writers of a batch share one).
func (s *Store) counted(fn func(tx *bolt.Tx) error) func(tx *bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		if s.lastTx.Swap(tx) != tx {
			tx.OnCommit(func() { s.commits.Add(1) })
			if s.decIndexer != nil && leftUnindexed(tx) {
				tx.OnCommit(s.decIndexer.wake)
			}
		}
		return nil
	}
}

// write runs fn in a read-write transaction of its own, or, when another
// write is in flight, in a batch with other writers. fn may then run more
// than once: it must set its results afresh on each run.
func (s *Store) write(ctx context.Context, fn func(tx *bolt.Tx) error) error {
	defer s.writers.Add(-1)
	if s.writers.Add(1) > 1 {
		return s.run(ctx, s.db.Batch, s.counted(fn))
	}
	return s.run(ctx, s.db.Update, s.counted(fn))
}

// run runs fn in a transaction, mapping errors and panics (bbolt panics on
// some corrupt pages) into procedures codes.
func (s *Store) run(ctx context.Context, txf func(func(*bolt.Tx) error) error, fn func(tx *bolt.Tx) error) (err error) {
	if s.closed.Load() {
		return fault.Errorf(fault.CodeUnavailable, "embedded store is closed")
	}
	if err := ctx.Err(); err != nil {
		return fault.Errorf(fault.CodeUnavailable, "request ended before the store was reached: %v", err)
	}
	defer func() {
		if r := recover(); r != nil {
			s.log.Error().Interface("panic", r).Msg("store transaction panicked: the file may be corrupt")
			err = fault.Errorf(fault.CodeInternal, "embedded store %s failed (the file may be corrupt): %v", s.path, r)
		}
	}()
	return s.mapErr(txf(fn))
}

// mapErr maps bbolt and system errors into procedures codes.
func (s *Store) mapErr(err error) error {
	if err == nil {
		return nil
	}
	var pe *fault.Error
	if errors.As(err, &pe) {
		return err
	}
	switch {
	case errors.Is(err, bolterrors.ErrDatabaseNotOpen), errors.Is(err, bolterrors.ErrTxClosed):
		return fault.Errorf(fault.CodeUnavailable, "embedded store is closed")
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, bolterrors.ErrMaxSizeReached):
		return fault.Errorf(fault.CodeUnavailable, "embedded store %s is full: nothing was written", s.path)
	case errors.Is(err, bolterrors.ErrKeyTooLarge), errors.Is(err, bolterrors.ErrValueTooLarge):
		return fault.Errorf(fault.CodeTooLarge, "a value is too large for the embedded store")
	}
	s.log.Error().Err(err).Msg("store error")
	return fault.Errorf(fault.CodeInternal, "embedded store %s: %v", s.path, err)
}

// Check verifies the file (bbolt's page check) and the store's own
// invariants: every procedure has a version, a rank entry and is counted,
// and the class counts are the classes of the rank entries.
func (s *Store) Check(ctx context.Context) error {
	return s.view(ctx, func(tx *bolt.Tx) error {
		var errs []error
		for err := range tx.Check() {
			errs = append(errs, err)
		}
		procs, rank, byName := tx.Bucket(bProcs).Stats().KeyN, tx.Bucket(bRank).Stats().KeyN, tx.Bucket(bRankByName).Stats().KeyN
		count := int(getU64(tx.Bucket(bMeta).Get(metaCount)))
		if procs != rank || procs != byName || procs != count {
			errs = append(errs, fmt.Errorf("index counts differ: %d procedures, %d rank entries, %d by name, count %d", procs, rank, byName, count))
		}
		if err := checkClasses(tx); err != nil {
			errs = append(errs, err)
		}
		err := tx.Bucket(bProcs).ForEach(func(k, v []byte) error {
			var r procRecord
			if err := decode(v, &r, "procedure"); err != nil {
				return err
			}
			if tx.Bucket(bVersions).Get(key(r.Name, r.Current)) == nil {
				return fmt.Errorf("procedure %s: current version %s missing", r.Name, r.Current)
			}
			rk := tx.Bucket(bRankByName).Get(k)
			if rk == nil || tx.Bucket(bRank).Get(rk) == nil || string(rk) != string(rankKey(r.Frequency, r.LastUsedAt, r.Name)) {
				return fmt.Errorf("procedure %s: rank entry missing or stale", r.Name)
			}
			return nil
		})
		if err != nil {
			errs = append(errs, err)
		}
		if len(errs) > 0 {
			return fault.Errorf(fault.CodeInternal, "embedded store %s fails its check: %v", s.path, errors.Join(errs...))
		}
		return nil
	})
}

// SearchIndexPath is where the store at path keeps its search index
// (path.search), which Open rebuilds from the file when it is missing: what
// a restore removes with the file it replaces, and a refused import with
// the file it created.
func SearchIndexPath(path string) string { return path + ".search" }
