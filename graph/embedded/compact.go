package embedded

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/privfile"
)

// CompactFill is how full Compact leaves the pages it writes: about what
// random inserts leave in a B+tree. (bbolt's own Compact fills them whole,
// so every later insert would split one.)
const CompactFill = 0.7

// compactTxKeys is how many keys Compact writes per transaction of the
// copy: a write transaction holds its dirty pages in memory.
const compactTxKeys = 50_000

// Compacted is what Compact did: the file's size and free pages before, and
// its size after.
type Compacted struct {
	BytesBefore, BytesAfter int64
	FreePagesBefore         int
}

// Compact rewrites the store file at path with its live pages only. A
// bbolt file keeps the free pages of its largest transaction (a load, a
// prune: thousands at 100k procedures), and every later commit copies and
// writes their list (docs/benchmarks.md, BenchmarkRequestGrowth). Every
// bucket, key, value and sequence is copied as it is, the pages
// CompactFill full, into a private file beside it (privfile: created
// exclusively, never through a link) that replaces path once complete and
// synced: whole or not at all. The search index beside the file stays
// valid (the copy keeps its generation). The store must be closed: Compact
// holds the file's lock throughout (CodeUnavailable when a server holds it,
// after lockTimeout).
func Compact(ctx context.Context, path string, lockTimeout time.Duration) (Compacted, error) {
	info, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Compacted{}, fault.Errorf(fault.CodeNotFound, "embedded store %s does not exist", path)
		}
		return Compacted{}, fault.Errorf(fault.CodeUnavailable, "embedded store %s: %v", path, err)
	}
	if lockTimeout <= 0 {
		lockTimeout = DefaultLockTimeout
	}
	src, err := openForCompact(path, lockTimeout)
	if err != nil {
		return Compacted{}, err
	}
	defer src.Close()
	if err := checkSchema(src, path); err != nil {
		return Compacted{}, err
	}
	out := Compacted{BytesBefore: info.Size(), FreePagesBefore: src.Stats().FreePageN}
	f, made, err := privfile.Create(filepath.Dir(path), "."+filepath.Base(path)+".compact-*", info.Mode().Perm())
	if err == nil {
		if err = f.Close(); err != nil {
			_ = os.Remove(f.Name())
		}
	}
	if err != nil {
		return Compacted{}, fault.Errorf(fault.CodeUnavailable, "embedded store %s: the copy cannot be made: %v", path, err)
	}
	opts := boltOptions(lockTimeout, false)
	opts.OpenFile = privfile.OpenMade
	tmp := f.Name()
	dst, err := bolt.Open(tmp, info.Mode().Perm(), opts)
	if err == nil {
		err = copyBuckets(ctx, dst, src)
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = privfile.Rename(tmp, made, path)
	}
	if err != nil {
		if rerr := os.Remove(tmp); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = fmt.Errorf("%v (the copy %s is left: %v)", err, tmp, rerr)
		}
		if fe := (*fault.Error)(nil); errors.As(err, &fe) {
			return Compacted{}, err
		}
		return Compacted{}, fault.Errorf(fault.CodeUnavailable, "embedded store %s: compacting failed (the file is unchanged): %v", path, err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync() // the rename, durable
		_ = d.Close()
	}
	if info, err := os.Stat(path); err == nil {
		out.BytesAfter = info.Size()
	}
	return out, nil
}

// openForCompact opens path for Compact: read-write, so that its lock is
// exclusive (no server opens the file while it is copied), with Open's
// errors. bbolt panics on some corrupt pages: that is an error too.
func openForCompact(path string, timeout time.Duration) (db *bolt.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fault.Errorf(fault.CodeUnavailable, "embedded store %s is corrupt: %v", path, r)
		}
	}()
	db, err = bolt.Open(path, 0o600, boltOptions(timeout, false))
	if err != nil {
		return nil, openError(path, timeout, err)
	}
	return db, nil
}

// checkSchema refuses a bbolt file that is not a procgraph store (no meta
// bucket): Compact copies only what Open would serve.
func checkSchema(db *bolt.DB, path string) error {
	return db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bMeta) == nil {
			return fault.Errorf(fault.CodeUnavailable, "embedded store %s is not a procgraph store file (no %s bucket)", path, bMeta)
		}
		return nil
	})
}

// copyBuckets copies every bucket of src into dst (empty), nested buckets
// and sequences included, its pages CompactFill full, in transactions of
// at most compactTxKeys keys, from one read transaction of src (a
// consistent copy). It stops when ctx ends.
func copyBuckets(ctx context.Context, dst, src *bolt.DB) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the store's pages cannot be read (the file may be corrupt): %v", r)
		}
	}()
	return src.View(func(stx *bolt.Tx) error {
		var pending []func(*bolt.Tx) error
		flush := func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			err := dst.Update(func(dtx *bolt.Tx) error {
				for _, put := range pending {
					if err := put(dtx); err != nil {
						return err
					}
				}
				return nil
			})
			pending = pending[:0]
			return err
		}
		var walk func(path [][]byte, sb *bolt.Bucket) error
		walk = func(path [][]byte, sb *bolt.Bucket) error {
			seq := sb.Sequence()
			pending = append(pending, func(dtx *bolt.Tx) error {
				b, err := bucketAt(dtx, path)
				if err != nil {
					return err
				}
				return b.SetSequence(seq)
			})
			return sb.ForEach(func(k, v []byte) error {
				if v == nil { // a nested bucket
					return walk(append(slices.Clip(path), slices.Clone(k)), sb.Bucket(k))
				}
				k, v = slices.Clone(k), slices.Clone(v)
				pending = append(pending, func(dtx *bolt.Tx) error {
					b, err := bucketAt(dtx, path)
					if err != nil {
						return err
					}
					return b.Put(k, v)
				})
				if len(pending) >= compactTxKeys {
					return flush()
				}
				return nil
			})
		}
		err := stx.ForEach(func(name []byte, b *bolt.Bucket) error {
			return walk([][]byte{slices.Clone(name)}, b)
		})
		if err != nil {
			return err
		}
		return flush()
	})
}

// bucketAt is the bucket at path in tx, made when missing, filled
// CompactFill full.
func bucketAt(tx *bolt.Tx, path [][]byte) (*bolt.Bucket, error) {
	b, err := tx.CreateBucketIfNotExists(path[0])
	for _, name := range path[1:] {
		if err != nil {
			return nil, err
		}
		b, err = b.CreateBucketIfNotExists(name)
	}
	if err != nil {
		return nil, err
	}
	b.FillPercent = CompactFill
	return b, nil
}
