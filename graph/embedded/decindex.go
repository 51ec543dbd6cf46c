package embedded

import (
	"bytes"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/audit"
)

// An audit record's index entries (bDecByField, bDecByProc) are written
// behind it: a request's transaction stores the record, its id and its key
// in bUnindexed, and the decision indexer moves the keys of bUnindexed into
// the indexes in transactions of its own, many records a commit. The
// request's commit so writes three leaves where it wrote five more and
// their branches (docs/adr/0064-the-audit-index-behind-the-log.md).
//
// Nothing is lost or missed: the key in bUnindexed is committed with the
// record, so a crash leaves it for the next Open, whose indexer takes it;
// ListDecisions reads the records of bUnindexed beside the index it walks
// (decisionTail), so a record is listed under every filter from its
// commit on; the indexer writes a record's entries and deletes its key in
// one transaction, so a reader sees the one or the other. Close indexes
// what is pending before the file closes.

// decisionIndexDelay is how long the indexer waits after a commit that
// left records unindexed, so that the records of the requests that follow
// share its commit; decisionIndexBatch the most records one of its
// transactions takes.
const (
	decisionIndexDelay = 20 * time.Millisecond
	decisionIndexBatch = 1000
)

// decisionIndexer is the goroutine that indexes bUnindexed.
type decisionIndexer struct {
	delay time.Duration // decisionIndexDelay
	kick  chan struct{} // a commit left records unindexed
	stop  chan struct{} // Close: index what is pending, then return
	done  chan struct{}
}

// startDecisionIndexer starts the indexer, delay after each wake-up; the
// first takes what a crash left unindexed.
func (s *Store) startDecisionIndexer(delay time.Duration) {
	s.decIndexer = &decisionIndexer{delay: delay, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	s.decIndexer.wake()
	go s.indexDecisions()
}

// wake has the indexer run after its delay (at most one wake-up waits).
func (d *decisionIndexer) wake() {
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

// stopDecisionIndexer indexes what is pending and stops the indexer
// (Close, once).
func (s *Store) stopDecisionIndexer() {
	close(s.decIndexer.stop)
	<-s.decIndexer.done
}

// indexDecisions is the indexer's loop.
func (s *Store) indexDecisions() {
	d := s.decIndexer
	defer close(d.done)
	for {
		select {
		case <-d.stop:
			s.indexPending()
			return
		case <-d.kick:
		}
		select {
		case <-d.stop:
			s.indexPending()
			return
		case <-time.After(d.delay):
		}
		s.indexPending()
	}
}

// indexPending indexes every record of bUnindexed, decisionIndexBatch a
// transaction. A failure is logged and leaves the rest for the next
// commit's wake-up: until then ListDecisions reads them from bUnindexed. A
// panic (bbolt's, on some corrupt pages) is logged too, as Store.run does:
// this goroutine has no request to answer it.
func (s *Store) indexPending() {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error().Interface("panic", r).Msg("audit records could not be indexed: the file may be corrupt")
		}
	}()
	for {
		var pending bool
		if err := s.db.View(func(tx *bolt.Tx) error {
			k, _ := tx.Bucket(bUnindexed).Cursor().First()
			pending = k != nil
			return nil
		}); err != nil || !pending {
			return
		}
		if err := s.db.Update(indexBatch); err != nil {
			s.log.Error().Err(err).Msg("audit records could not be indexed: they stay listed from the unindexed bucket")
			return
		}
	}
}

// indexBatch writes the index entries of up to decisionIndexBatch records
// of bUnindexed and deletes their keys from it.
func indexBatch(tx *bolt.Tx) error {
	c, decisions := tx.Bucket(bUnindexed).Cursor(), tx.Bucket(bDecisions)
	n := 0
	for k, _ := c.First(); k != nil && n < decisionIndexBatch; k, _ = c.First() {
		dk := bytes.Clone(k)
		if v := decisions.Get(dk); v != nil { // a pruned record has no entries to write
			var d audit.Decision
			if err := decode(v, &d, "decision"); err != nil {
				return err
			}
			if err := indexDecision(tx, d, dk); err != nil {
				return err
			}
		}
		if err := c.Delete(); err != nil {
			return err
		}
		n++
	}
	return nil
}

// leftUnindexed reports whether tx holds records the indexer has yet to
// take (tested before a commit, to wake it once committed).
func leftUnindexed(tx *bolt.Tx) bool {
	k, _ := tx.Bucket(bUnindexed).Cursor().First()
	return k != nil
}

// decisionTail is the records of bUnindexed that f's listing must show
// beside the index it walks: those under upper (nil: none above) and from
// lower on (nil: none below) that match f, newest first.
func decisionTail(tx *bolt.Tx, f audit.DecisionFilter, upper, lower []byte) ([]tailRecord, error) {
	c, decisions := tx.Bucket(bUnindexed).Cursor(), tx.Bucket(bDecisions)
	var out []tailRecord
	for k, _ := seekBefore(c, upper); k != nil; k, _ = c.Prev() {
		if lower != nil && bytes.Compare(k[:8], lower) < 0 {
			break
		}
		v := decisions.Get(k)
		if v == nil {
			continue
		}
		var d audit.Decision
		if err := decode(v, &d, "decision"); err != nil {
			return nil, err
		}
		d.At = d.At.UTC()
		if f.Match(d) {
			out = append(out, tailRecord{key: bytes.Clone(k), d: d})
		}
	}
	return out, nil
}

// tailRecord is a record of decisionTail and its decision key.
type tailRecord struct {
	key []byte
	d   audit.Decision
}
