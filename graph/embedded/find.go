package embedded

import (
	"bytes"
	"context"
	"math"
	"sort"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/procedures"
)

// matcher evaluates Find's summary filters (status, min tools, read-only,
// exposed) on a rank entry, without decoding the procedure.
type matcher struct {
	q        *procedures.Query
	roNames  map[string]bool
	s        summary
	sigShape []string // len(sig) names, for procedures.IsExposed
}

func newMatcher(q *procedures.Query) *matcher {
	m := &matcher{q: q}
	if q.ReadOnly != nil || q.Exposed != nil {
		m.roNames = make(map[string]bool, len(q.ReadOnlyNames))
		for _, n := range q.ReadOnlyNames {
			m.roNames[n] = true
		}
	}
	return m
}

// filters reports whether any summary filter is set.
func (m *matcher) filters() bool {
	q := m.q
	return q.Status != "" || q.MinTools > 0 || q.ReadOnly != nil || q.Exposed != nil
}

func (m *matcher) match(v []byte) bool {
	if !decodeSummary(v, &m.s) {
		return false
	}
	q, s := m.q, &m.s
	status := procedures.StatusFailed
	if s.succeeded {
		status = procedures.StatusSucceeded
	}
	if q.Status != "" && q.Status != status {
		return false
	}
	if q.MinTools > 0 && len(s.sig) < q.MinTools {
		return false
	}
	if q.ReadOnly == nil && q.Exposed == nil {
		return true
	}
	readOnly := true // procedures.WithinNames, on the encoded names
	for _, n := range s.sig {
		if !m.roNames[string(n)] {
			readOnly = false
			break
		}
	}
	if q.ReadOnly != nil && *q.ReadOnly != readOnly {
		return false
	}
	if q.Exposed != nil {
		for len(m.sigShape) < len(s.sig) {
			m.sigShape = append(m.sigShape, "")
		}
		if procedures.IsExposed(status, s.opaque, m.sigShape[:len(s.sig)], readOnly, q.AllowMutating) != *q.Exposed {
			return false
		}
	}
	return true
}

func validateQuery(q *procedures.Query) error {
	switch {
	case q.Limit < 0:
		return invalid("limit", "limit %d is negative", q.Limit)
	case q.Offset < 0:
		return invalid("offset", "offset %d is negative", q.Offset)
	case q.MinTools < 0:
		return invalid("min_tools", "min tools %d is negative", q.MinTools)
	case q.Status != "" && !q.Status.Valid():
		return invalid("status", "status %q is neither %q nor %q", q.Status, procedures.StatusSucceeded, procedures.StatusFailed)
	}
	return nil
}

// Find returns the page of procedures matching q and the total matching
// (see procedures.Store). Without filters it walks the first Offset+Limit
// entries of the rank index; summary filters scan the rank index; cause and
// tool filters start from their indexes.
func (s *Store) Find(ctx context.Context, q procedures.Query) ([]*procedures.Procedure, int, error) {
	if err := validateQuery(&q); err != nil {
		return nil, 0, err
	}
	var out []*procedures.Procedure
	var total int
	err := s.view(ctx, func(tx *bolt.Tx) error {
		var page []string
		var err error
		if len(q.Causes) > 0 || len(q.Tools) > 0 {
			page, total, err = findIndexed(tx, &q)
		} else {
			page, total = findRanked(tx, &q)
		}
		if err != nil {
			return err
		}
		out = make([]*procedures.Procedure, 0, len(page))
		for _, name := range page {
			p, err := loadProcedure(tx, name)
			if err != nil {
				return err
			}
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
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

// findRanked walks the rank index in order.
func findRanked(tx *bolt.Tx, q *procedures.Query) ([]string, int) {
	m := newMatcher(q)
	c := tx.Bucket(bRank).Cursor()
	var page []string
	if !m.filters() {
		total := int(getU64(tx.Bucket(bMeta).Get(metaCount)))
		i, end := 0, pageEnd(q)
		for k, _ := c.First(); k != nil && i < end; k, _ = c.Next() {
			if i >= q.Offset {
				page = append(page, rankName(k))
			}
			i++
		}
		return page, total
	}
	total := 0
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if !m.match(v) {
			continue
		}
		if inPage(q, total) {
			page = append(page, rankName(k))
		}
		total++
		if q.SkipTotal && total >= pageEnd(q) {
			return page, -1 // the page is full and nobody wants the total
		}
	}
	return page, total
}

// findIndexed gathers the candidates of the cause and tool filters from
// their indexes, then filters and orders their rank entries.
func findIndexed(tx *bolt.Tx, q *procedures.Query) ([]string, int, error) {
	var cands map[string]bool
	if len(q.Causes) > 0 {
		cands = map[string]bool{}
		for _, c := range q.Causes {
			_ = scanPrefix(tx.Bucket(bEdgesCP), prefix(c), func(rest, _ []byte) error {
				cands[string(rest)] = true
				return nil
			})
		}
	}
	if len(q.Tools) > 0 {
		tools := tx.Bucket(bToolProcs)
		if cands == nil {
			cands = map[string]bool{}
			_ = scanPrefix(tools, prefix(q.Tools[0]), func(rest, _ []byte) error {
				cands[string(rest)] = true
				return nil
			})
		}
		for name := range cands {
			for _, t := range q.Tools {
				if tools.Get(key(t, name)) == nil {
					delete(cands, name)
					break
				}
			}
		}
	}
	m := newMatcher(q)
	byName, rank := tx.Bucket(bRankByName), tx.Bucket(bRank)
	keys := make([][]byte, 0, len(cands))
	for name := range cands {
		rk := byName.Get([]byte(name))
		if rk == nil {
			return nil, 0, procedures.Errorf(procedures.CodeInternal, "embedded store: procedure %s has no rank entry", name)
		}
		if m.filters() && !m.match(rank.Get(rk)) {
			continue
		}
		keys = append(keys, rk)
	}
	sort.Slice(keys, func(i, j int) bool { return bytes.Compare(keys[i], keys[j]) < 0 })
	var page []string
	for i, k := range keys {
		if inPage(q, i) {
			page = append(page, rankName(k))
		}
	}
	return page, len(keys), nil
}
