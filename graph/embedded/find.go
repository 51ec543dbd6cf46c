package embedded

import (
	"bytes"
	"context"
	"math"
	"slices"
	"sort"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
)

// matcher evaluates Find's summary filters on a rank entry, without
// decoding the procedure: procedures.Query.Match on its kept Class.
type matcher struct {
	q *procedures.Query
	s summary
}

func newMatcher(q *procedures.Query) *matcher { return &matcher{q: q} }

// filters reports whether any summary filter is set.
func (m *matcher) filters() bool { return m.q.Summarised() }

func (m *matcher) match(v []byte) bool {
	return decodeSummary(v, &m.s) && m.q.Match(m.s.class())
}

// Find returns the page of procedures matching q and the total matching
// (see procedures.Store). Without cause or tool filters it walks the rank
// index until the page is full (skipping entries the summary filters
// reject) and sums the maintained class counts for the total; cause and
// tool filters start from their indexes.
func (s *Store) Find(ctx context.Context, q procedures.Query) ([]*procedures.Procedure, int, error) {
	ps, total, _, err := s.find(ctx, q, false)
	return ps, total, err
}

// FindWithCatalogue is Find and Catalogue in one read transaction (see
// procedures.CatalogueFinder).
func (s *Store) FindWithCatalogue(ctx context.Context, q procedures.Query) ([]*procedures.Procedure, int, *procedures.Catalogue, error) {
	return s.find(ctx, q, true)
}

// find is Find, with the catalogue read in the same transaction when
// withCatalogue (a search reads it in a transaction of its own).
func (s *Store) find(ctx context.Context, q procedures.Query, withCatalogue bool) ([]*procedures.Procedure, int, *procedures.Catalogue, error) {
	if err := q.Validate(); err != nil {
		return nil, 0, nil, err
	}
	if len(q.Search) > 0 {
		ps, total, err := s.findSearch(ctx, &q)
		if err != nil || !withCatalogue {
			return ps, total, nil, err
		}
		cat, err := s.Catalogue(ctx)
		if err != nil {
			return nil, 0, nil, err
		}
		return ps, total, cat, nil
	}
	var out []*procedures.Procedure
	var total int
	var cat *procedures.Catalogue
	err := s.view(ctx, func(tx *bolt.Tx) error {
		var page [][]byte
		var err error
		if len(q.Causes) > 0 || len(q.Tools) > 0 {
			page, total, _, err = findIndexed(tx, &q)
		} else {
			page, total = findRanked(tx, &q)
		}
		if err != nil {
			return err
		}
		out = make([]*procedures.Procedure, 0, len(page))
		r := s.newProcReader(tx)
		for _, name := range page {
			p, err := r.loadKey(name)
			if err != nil {
				return err
			}
			out = append(out, p)
		}
		if withCatalogue {
			cat, err = s.catalogueIn(tx)
		}
		return err
	})
	if err != nil {
		return nil, 0, nil, err
	}
	return out, total, cat, nil
}

// pageEnd is the index after q's page (saturating; no limit: MaxInt).
func pageEnd(q *procedures.Query) int {
	end := q.Offset + q.Limit
	if q.Limit == 0 || end < q.Offset {
		return math.MaxInt
	}
	return end
}

// inPage reports whether the i-th match (from 0) is on q's page.
func inPage(q *procedures.Query, i int) bool { return i >= q.Offset && i < pageEnd(q) }

// findRanked walks the rank index in order until q's page is full; the
// total is the count of procedures or the sum of the matching classes. The
// page's names are the database's bytes (rankNameBytes), valid for tx.
func findRanked(tx *bolt.Tx, q *procedures.Query) ([][]byte, int) {
	m := newMatcher(q)
	filters := m.filters()
	total := -1
	if !q.SkipTotal {
		if filters {
			total = matchingTotal(tx, q)
		} else {
			total = int(getU64(tx.Bucket(bMeta).Get(metaCount)))
		}
	}
	end := pageEnd(q)
	if total >= 0 && total < end {
		end = total // nothing matches past the total: stop there, not at the end of the index
	}
	var keep func([]byte) bool
	if filters {
		keep = m.match
	}
	page, counted, _ := walkRank(tx, q, end, math.MaxInt, keep)
	if total < 0 {
		total = counted
	}
	return page, total
}

// walkRank walks the rank index in Find's order, taking the entries keep
// accepts (every one when keep is nil) as matches, until end matches or
// budget entries read: the names of those on q's page (rankNameBytes), the
// number of matches when the walk reached the end of the index, so counted
// every one (-1 when it stopped before), and the entries read.
func walkRank(tx *bolt.Tx, q *procedures.Query, end, budget int, keep func(v []byte) bool) (page [][]byte, counted, read int) {
	c := tx.Bucket(bRank).Cursor()
	i := 0
	k, v := c.First()
	for ; k != nil && i < end && read < budget; k, v = c.Next() {
		read++
		if keep != nil && !keep(v) {
			continue
		}
		if i >= q.Offset {
			page = append(page, rankNameBytes(k))
		}
		i++
	}
	if k != nil {
		return page, -1, read
	}
	return page, i, read
}

// findIndexed gathers the candidates of the cause and tool filters from
// their indexes, then filters and orders their rank entries (the page as
// findRanked's); with tools and no causes it may walk the rank index
// instead (findTools). read is the number of index entries it read (rank
// entries walked, callers and causes' procedures, their rank entries).
func findIndexed(tx *bolt.Tx, q *procedures.Query) (page [][]byte, total, read int, err error) {
	var rare string
	if len(q.Causes) == 0 && len(q.Tools) > 0 {
		var walk bool
		rare, page, total, read, walk = findTools(tx, q)
		if walk {
			return page, total, read, nil
		}
	}
	var cands map[string]bool
	if len(q.Causes) > 0 {
		cands = map[string]bool{}
		for _, c := range q.Causes {
			_ = scanPrefix(tx.Bucket(bEdgesCP), prefix(c), func(rest, _ []byte) error {
				cands[string(rest)] = true
				read++
				return nil
			})
		}
	}
	m := newMatcher(q)
	byName, rank := tx.Bucket(bRankByName), tx.Bucket(bRank)
	var keys [][]byte
	if cands == nil {
		// Tools alone: the rarest tool's callers (each once), tested on
		// their rank entries' summaries (class and signature), read with
		// two cursors (a Get makes a cursor each time).
		filters := m.filters()
		names, ranks := byName.Cursor(), rank.Cursor()
		err = scanPrefix(tx.Bucket(bToolProcs), prefix(rare), func(name, _ []byte) error {
			rk := seekGet(names, name)
			if rk == nil {
				return fault.Errorf(fault.CodeInternal, "embedded store: procedure %s has no rank entry", name)
			}
			read += 2
			if decodeSummary(seekGet(ranks, rk), &m.s) && (!filters || q.Match(m.s.class())) && sigHasAll(m.s.sig, q.Tools) {
				keys = append(keys, rk)
			}
			return nil
		})
		if err != nil {
			return nil, 0, read, err
		}
	}
	if len(q.Tools) > 0 && cands != nil {
		tools := tx.Bucket(bToolProcs)
		for name := range cands {
			if !hasAllTools(tools, q.Tools, name) {
				delete(cands, name)
			}
		}
	}
	for name := range cands {
		rk := byName.Get([]byte(name))
		if rk == nil {
			return nil, 0, read, fault.Errorf(fault.CodeInternal, "embedded store: procedure %s has no rank entry", name)
		}
		read++
		if m.filters() && !m.match(rank.Get(rk)) {
			continue
		}
		keys = append(keys, rk)
	}
	sort.Slice(keys, func(i, j int) bool { return bytes.Compare(keys[i], keys[j]) < 0 })
	page = nil
	for i, k := range keys {
		if inPage(q, i) {
			page = append(page, rankNameBytes(k))
		}
	}
	return page, len(keys), read, nil
}

// findTools answers a query with tools and no causes by walking the rank
// index, testing each entry's summary (class and signature), when that is
// cheaper than sorting the callers of the rarest tool: when
// degree^2 > (offset + limit) x all procedures, as find_filtered.cypher
// chooses. The walk stops once the page is full, or after
// procedures.Query.FindWalk entries or walkPerCaller per caller of the
// rarest tool, whichever is more (its matches are sparser than the
// degree says: several tools each common but rarely together, a selective
// class filter); the total is then read from the per-tool class counts for
// one tool (toolTotal), is -1 with SkipTotal, and for several tools is not
// walked for (a count per tool and class cannot tell how many call all of
// them): walk is false then, as when the callers are cheaper or the walk
// read its bound without filling the page, and the caller gathers the
// callers of rare, the rarest tool. read is the rank entries walked. A
// Bounded q takes the callers when they are at most q.BoundedCallers, and
// otherwise the walk of at most q.FindWalk entries alone.
func findTools(tx *bolt.Tx, q *procedures.Query) (rare string, page [][]byte, total, read int, walk bool) {
	degree, matching := -1, 0
	for _, t := range q.Tools {
		all, m := toolTotal(tx, t, q)
		if degree < 0 || all < degree {
			rare, degree, matching = t, all, m
		}
	}
	end := pageEnd(q)
	if q.Bounded {
		if degree <= q.BoundedCallers() {
			return rare, nil, 0, 0, false // few callers: all of them, exact
		}
		page, _, read := walkRank(tx, q, end, q.FindWalk(), toolsMatch(q))
		return rare, page, -1, read, true // the walk's matches, whether or not it filled the page
	}
	single := len(q.Tools) == 1
	everything := getU64(tx.Bucket(bMeta).Get(metaCount))
	if (!single && !q.SkipTotal) || end == math.MaxInt || uint64(degree)*uint64(degree) <= uint64(end)*everything {
		return rare, nil, 0, 0, false
	}
	total = -1
	if single {
		total = matching
		end = min(end, total)
	}
	budget := max(q.FindWalk(), walkPerCaller*degree)
	page, counted, read := walkRank(tx, q, end, budget, toolsMatch(q))
	if counted < 0 && len(page) < end-q.Offset {
		return rare, nil, 0, read, false // the bound, before the page was full
	}
	if total < 0 {
		total = counted
	}
	return rare, page, total, read, true
}

// toolsMatch is the test of findTools' walk on a rank entry: its summary's
// class passes q's filters and its signature holds every tool of q.
func toolsMatch(q *procedures.Query) func(v []byte) bool {
	m := newMatcher(q)
	filters := m.filters()
	return func(v []byte) bool {
		return decodeSummary(v, &m.s) && (!filters || q.Match(m.s.class())) && sigHasAll(m.s.sig, q.Tools)
	}
}

// walkPerCaller is how many rank entries findTools may walk per caller of
// the rarest tool before it reads the callers instead: a caller costs two
// seeks (its rank key, then its rank entry), about as much as that many
// entries walked in order. So a walk that would cost no more than the
// callers is not cut short, and one that would cost more stops at a bound
// set by the rarest tool's degree, not by the number of procedures.
const walkPerCaller = 8

// sigHasAll reports whether the summary's signature holds every tool.
func sigHasAll(sig [][]byte, tools []string) bool {
	for _, t := range tools {
		if !slices.ContainsFunc(sig, func(s []byte) bool { return string(s) == t }) {
			return false
		}
	}
	return true
}

// seekGet is Bucket.Get on c's bucket: the value under k, nil when there is
// none.
func seekGet(c *bolt.Cursor, k []byte) []byte {
	got, v := c.Seek(k)
	if !bytes.Equal(got, k) {
		return nil
	}
	return v
}
