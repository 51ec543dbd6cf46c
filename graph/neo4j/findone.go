package neo4j

import (
	"context"
	"slices"
	"sync"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/procedures"
)

// classCache holds the classes the store has read (classes.cypher), by
// key. A class's key is made of its fields (fragments/class_sync.cypher),
// so a cached class never goes stale; only classes created since it was
// read can be missing, and find_classes.cypher reports those.
type classCache struct {
	mu sync.Mutex
	m  map[string]procedures.Class
}

// get returns the cached classes (nil before the first read).
func (c *classCache) get() map[string]procedures.Class {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m
}

// set replaces the cached classes.
func (c *classCache) set(counts map[string]classCount) map[string]procedures.Class {
	m := make(map[string]procedures.Class, len(counts))
	for k, cc := range counts {
		m[k] = cc.class
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m = m
	return m
}

// findOne is Find in one statement alone in its transaction (one round
// trip for BEGIN, the statement and its records, one for COMMIT), instead
// of a transaction function's BEGIN, class counts, page, count and COMMIT.
// Without filters it is find_all.cypher; with summary filters only,
// find_classes.cypher; with cause or tool filters, find_filtered.cypher.
// Summary filters select among the cached classes, read again when the
// statement reports classes the cache does not hold. ok is false when
// classes kept appearing (the caller then reads in one transaction). The
// statement also answers the catalogue (fragments/catalogue_since.cypher,
// asked with params' known_catalogue): row is its row, nil when no
// statement answered.
func (s *Store) findOne(ctx context.Context, q procedures.Query, params map[string]any) (ps []*procedures.Procedure, total int, row *neo4j.Record, ok bool, err error) {
	if _, asked := params["known_catalogue"]; !asked {
		params["known_catalogue"] = nil // the revision alone
	}
	filtered := len(q.Causes) > 0 || len(q.Tools) > 0
	if !q.Summarised() && !filtered {
		recs, err := query(ctx, s, "find", neo4j.AccessModeRead, "find_all", params)
		if err != nil {
			return nil, 0, nil, true, err
		}
		ps, total, err := s.decodeFound(recs, "find_all")
		if err != nil {
			return nil, 0, nil, true, err
		}
		return ps, total, recs[0], true, nil
	}
	name := "find_classes"
	if filtered {
		name = "find_filtered"
		params["known"], params["skipTotal"] = []string{}, q.SkipTotal
	}
	classes := s.classes.get()
	for attempt := 0; attempt < 3; attempt++ {
		if q.Summarised() {
			if classes == nil || attempt > 0 {
				var err error
				if classes, err = s.readClasses(ctx); err != nil {
					return nil, 0, nil, true, err
				}
			}
			keys, known := selectClasses(classes, q)
			if len(keys) == 0 {
				if attempt > 0 { // just read: no class has a matching procedure
					return nil, 0, nil, true, nil
				}
				continue // (an empty $classes would walk every procedure)
			}
			params["classes"], params["known"] = keys, known
		}
		recs, err := query(ctx, s, "find", neo4j.AccessModeRead, name, params)
		if err != nil {
			return nil, 0, nil, true, err
		}
		if len(recs) != 1 {
			return nil, 0, nil, true, s.mapError("find", errRows(name, len(recs)))
		}
		if unknown, _ := field(recs[0], "unknown").([]any); len(unknown) > 0 {
			continue
		}
		ps, total, err := s.decodeFound(recs, name)
		if err != nil {
			return nil, 0, nil, true, err
		}
		if filtered { // the total is counted, or told by the page
			if field(recs[0], "isCounted") == true {
				n, _ := field(recs[0], "counted").(int64)
				total = int(n)
			} else {
				total = pageTotal(q, len(ps), field(recs[0], "complete") == true)
			}
		}
		return ps, total, recs[0], true, nil
	}
	return nil, 0, nil, false, nil
}

// pageTotal is the total of a page of n procedures of the filtered Find q
// (fragments/filtered_page) that was not counted: unknown (-1) when it is
// full and q skips the total, or q is Bounded and the page did not meet
// every match (incomplete: the walk alone), else the matches up to it.
func pageTotal(q procedures.Query, n int, complete bool) int {
	if q.SkipTotal && q.Limit > 0 && n == q.Limit || q.Bounded && !complete {
		return -1
	}
	return q.Offset + n
}

// decodeFound decodes the one row of find_all or find_classes: total and
// the page.
func (s *Store) decodeFound(recs []*neo4j.Record, name string) ([]*procedures.Procedure, int, error) {
	if len(recs) != 1 {
		return nil, 0, s.mapError("find", errRows(name, len(recs)))
	}
	total, _ := field(recs[0], "total").(int64)
	list, _ := field(recs[0], "procedures").([]any)
	ps := make([]*procedures.Procedure, 0, len(list))
	for _, v := range list {
		p, err := s.decodeProcedure(v)
		if err != nil {
			return nil, 0, s.mapError("find", err)
		}
		ps = append(ps, p)
	}
	return ps, int(total), nil
}

// readClasses reads every class (classes.cypher) into the store's cache.
func (s *Store) readClasses(ctx context.Context) (map[string]procedures.Class, error) {
	recs, err := query(ctx, s, "find", neo4j.AccessModeRead, "classes", nil)
	if err != nil {
		return nil, err
	}
	counts, err := decodeClassCounts(recs)
	if err != nil {
		return nil, s.mapError("find", err)
	}
	return s.classes.set(counts), nil
}

// selectClasses returns the keys of the classes q's summary filters select
// (procedures.Query.Match, the one filter), sorted, and the keys of every
// class the caller holds: a statement given both reports the classes it
// met that are not known, so that the caller reads them and asks again.
func selectClasses(classes map[string]procedures.Class, q procedures.Query) (keys, known []string) {
	keys, known = []string{}, make([]string, 0, len(classes))
	for k, c := range classes {
		known = append(known, k)
		if q.Match(c) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys, known
}
