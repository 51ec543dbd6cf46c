package embedded

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/procgraph/procgraph/fault"
	"github.com/rs/zerolog"
	bolt "go.etcd.io/bbolt"
)

// The indexer keeps the bleve index up with the search bucket, off the
// writers' path. A write that changed search parts enqueues, after its
// commit, the names it changed and the generations its transaction took,
// (from, to] (putSearchParts bumps metaSearchGen once per name, and bbolt
// serialises writers, so a transaction's generations are contiguous). One
// goroutine takes everything pending, reads the current parts of those
// names in one read transaction — the newest committed document wins,
// whatever order the enqueues came in — and writes them in one bleve batch
// with the generation the index then holds: the largest G such that every
// generation ≤ G has been indexed, so a commit whose enqueue is late holds
// it back. The batch carries the documents and the generation together
// (atomic), so a crash at any moment leaves an index whose recorded
// generation is at most what it holds, and Open rebuilds one that is
// behind the file.
//
// Read your writes: a search first waits until everything enqueued before
// it began is indexed (wait). Captures that arrive together share one
// batch. A failed batch is logged and stops the indexer: the index keeps a
// generation below the file's (rebuilt at the next Open) and every search
// fails with CodeUnavailable until then, rather than answer from an index
// known to miss documents. Close indexes what is pending, stops the
// goroutine, then closes bleve.

// indexBatchSize is the most documents in one bleve batch; a larger
// round (an import) is split, the generation in its last batch.
const indexBatchSize = 2000

// genRange is the generations (from, to] of one committed transaction.
type genRange struct{ from, to uint64 }

// searchIndex is the bleve index and its indexer.
type searchIndex struct {
	idx bleve.Index
	db  *bolt.DB
	log zerolog.Logger

	mu       sync.Mutex
	names    map[string]struct{} // pending: to read and index
	ranges   []genRange          // pending: the generations they came with
	enqueued uint64              // enqueues so far
	done     uint64              // enqueues indexed (or dropped after a failure)
	progress chan struct{}       // closed and replaced when done moves
	failed   bool
	closing  bool

	// The indexer goroutine's own: the generation recorded in the index,
	// and the indexed ranges above it that a gap still holds back.
	gen     uint64
	indexed []genRange

	// beforeApply, when set (tests only), runs before each round is applied.
	beforeApply func()
	// lingerFor is the linger (indexLinger; tests set another, under mu),
	// and beforeLinger, when set (tests only), runs as one begins.
	lingerFor    time.Duration
	beforeLinger func()

	wake    chan struct{} // a pending enqueue or Close
	urgent  chan struct{} // a search waits, or Close: stop lingering
	waiting int           // searches waiting (guarded by mu)
	stopped chan struct{} // closed when the goroutine returns
}

// indexLinger is how long the indexer lets enqueues gather before a round
// when no search waits for it: sequential captures then share a batch
// (its analysis, persistence and the merges of the segments it makes)
// instead of paying one each, and take less CPU from the writers. A
// search that waits ends the linger at once, so read-your-writes costs
// nothing more. 50 ms (it was 2 ms) halves the server's CPU per new
// capture in a run of them (docs/benchmarks.md, "CPU per request, the
// server process").
const indexLinger = 50 * time.Millisecond

// newSearchIndex starts the indexer of idx, which holds generation gen.
func newSearchIndex(idx bleve.Index, db *bolt.DB, log zerolog.Logger, gen uint64) *searchIndex {
	si := &searchIndex{
		idx: idx, db: db, log: log, gen: gen, lingerFor: indexLinger,
		names:    map[string]struct{}{},
		progress: make(chan struct{}),
		wake:     make(chan struct{}, 1),
		urgent:   make(chan struct{}, 1),
		stopped:  make(chan struct{}),
	}
	go si.run()
	return si
}

// enqueue queues the documents a committed transaction changed. After
// Close has begun it drops them: the index then stays behind the file and
// the next Open rebuilds it.
func (si *searchIndex) enqueue(d *searchDocs) {
	if len(d.names) == 0 {
		return
	}
	si.mu.Lock()
	if si.closing {
		si.mu.Unlock()
		si.log.Warn().Msg("a write committed while the store closed: the search index is rebuilt at the next start")
		return
	}
	for name := range d.names {
		si.names[name] = struct{}{}
	}
	si.ranges = append(si.ranges, genRange{d.from, d.to})
	si.enqueued++
	si.mu.Unlock()
	select {
	case si.wake <- struct{}{}:
	default:
	}
}

// wait returns once everything enqueued before it was called is indexed.
// It returns CodeUnavailable when ctx ends first or the indexer failed.
func (si *searchIndex) wait(ctx context.Context) error {
	si.mu.Lock()
	target := si.enqueued
	if si.done < target {
		si.waiting++
		defer func() { si.mu.Lock(); si.waiting--; si.mu.Unlock() }()
		signal(si.urgent)
	}
	for si.done < target && !si.failed {
		ch := si.progress
		si.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fault.Errorf(fault.CodeUnavailable, "request ended while the search index caught up: %v", ctx.Err())
		}
		si.mu.Lock()
	}
	failed := si.failed
	si.mu.Unlock()
	if failed {
		return fault.Errorf(fault.CodeUnavailable, "embedded store: the search index failed to update; it is rebuilt at the next start")
	}
	return nil
}

// state reports the enqueues not yet indexed and whether an update failed.
func (si *searchIndex) state() (pending uint64, failed bool) {
	si.mu.Lock()
	defer si.mu.Unlock()
	return si.enqueued - si.done, si.failed
}

// run is the indexer goroutine: it indexes what is pending, round after
// round, until Close and nothing is left.
func (si *searchIndex) run() {
	defer close(si.stopped)
	for {
		si.mu.Lock()
		for len(si.names) == 0 && !si.closing {
			si.mu.Unlock()
			<-si.wake
			si.mu.Lock()
		}
		if len(si.names) == 0 {
			si.mu.Unlock()
			return
		}
		if !si.closing && si.waiting == 0 {
			d, hook := si.lingerFor, si.beforeLinger
			si.mu.Unlock()
			if hook != nil {
				hook()
			}
			si.linger(d)
			si.mu.Lock()
		}
		names, ranges, seq, failed, hook := si.names, si.ranges, si.enqueued, si.failed, si.beforeApply
		si.names, si.ranges = map[string]struct{}{}, nil
		si.mu.Unlock()
		var err error
		if !failed {
			if hook != nil {
				hook()
			}
			err = si.apply(names, ranges)
		}
		si.mu.Lock()
		if err != nil {
			si.failed = true
			si.log.Error().Err(err).Msg("search index update failed: searches fail until the next start, which rebuilds the index")
		}
		si.done = seq
		close(si.progress)
		si.progress = make(chan struct{})
		si.mu.Unlock()
	}
}

// apply indexes the current documents of names and records the generation
// the index then holds (contiguous). The documents are read and indexed
// indexBatchSize at a time, each read in a short read transaction (a long
// one would hold up a writer that grows the file); every read follows the
// commits of ranges, so each sees their documents or newer ones. The
// generation goes in the last batch.
func (si *searchIndex) apply(names map[string]struct{}, ranges []genRange) error {
	gen, rest := contiguous(si.gen, append(si.indexed, ranges...))
	all := make([]string, 0, len(names))
	for name := range names {
		all = append(all, name)
	}
	for lo := 0; lo < len(all); lo += indexBatchSize {
		chunk := all[lo:min(lo+indexBatchSize, len(all))]
		b := si.idx.NewBatch()
		err := si.db.View(func(tx *bolt.Tx) error {
			bucket := tx.Bucket(bSearch)
			for _, name := range chunk {
				if err := indexParts(b, name, bucket.Get([]byte(name))); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if last := lo+indexBatchSize >= len(all); last && gen != si.gen {
			b.SetInternal([]byte(searchGenKey), []byte(strconv.FormatUint(gen, 10)))
		}
		if err := si.idx.Batch(b); err != nil {
			return err
		}
	}
	si.gen, si.indexed = gen, rest
	return nil
}

// contiguous is the generation an index at gen holds once the ranges are
// indexed too: gen moved up through every range that starts where it
// stands; the ranges still above a gap are returned, adjacent ones joined
// (so a gap that is never filled — a write that committed but could not
// hand over its documents — costs one range, and a rebuild at the next
// Open).
func contiguous(gen uint64, ranges []genRange) (uint64, []genRange) {
	rs := slices.Clone(ranges)
	slices.SortFunc(rs, func(a, b genRange) int { return cmp.Compare(a.from, b.from) })
	var rest []genRange
	for _, r := range rs {
		switch {
		case r.to <= gen:
		case r.from <= gen:
			gen = r.to
		case len(rest) > 0 && rest[len(rest)-1].to >= r.from:
			rest[len(rest)-1].to = max(rest[len(rest)-1].to, r.to)
		default:
			rest = append(rest, r)
		}
	}
	return gen, rest
}

// linger waits d, or less when a search waits or Close begins. A stale
// signal (a search that no longer waits) only ends one linger early.
func (si *searchIndex) linger(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-si.urgent:
	}
}

// signal wakes the goroutine listening on ch, if it is not already woken.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// close indexes what is pending, stops the indexer and closes the index.
func (si *searchIndex) close() error {
	si.mu.Lock()
	si.closing = true
	si.mu.Unlock()
	signal(si.urgent)
	select {
	case si.wake <- struct{}{}:
	default:
	}
	<-si.stopped
	return si.idx.Close()
}
