package neo4j

import (
	"context"
	"fmt"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/procedures"
)

// Get returns one procedure with its current version, causes and grant.
func (s *Store) Get(ctx context.Context, name string) (*procedures.Procedure, error) {
	ps, err := s.readByName(ctx, "get", []string{name})
	if err != nil {
		return nil, err
	}
	if len(ps) == 0 {
		return nil, notFound(name)
	}
	return ps[0], nil
}

// readByName reads the procedures among names that exist, in one statement
// (procedures_by_name.cypher) alone in its transaction.
func (s *Store) readByName(ctx context.Context, op string, names []string) ([]*procedures.Procedure, error) {
	recs, err := query(ctx, s, op, neo4j.AccessModeRead, "procedures_by_name", map[string]any{"names": stringList(names)})
	if err != nil {
		return nil, err
	}
	ps, err := s.decodeProcedures(recs)
	return ps, s.mapError(op, err)
}

// getInTx reads one procedure inside tx; CodeNotFound when it does not exist.
func (c *jsonCaches) getInTx(ctx context.Context, tx neo4j.ManagedTransaction, name string) (*procedures.Procedure, error) {
	ps, err := c.byName(ctx, tx, []string{name})
	if err != nil {
		return nil, err
	}
	if len(ps) == 0 {
		return nil, notFound(name)
	}
	return ps[0], nil
}

// byName reads the procedures among names that exist inside tx.
func (c *jsonCaches) byName(ctx context.Context, tx neo4j.ManagedTransaction, names []string) ([]*procedures.Procedure, error) {
	recs, err := collect(ctx, tx, "procedures_by_name", map[string]any{"names": stringList(names)})
	if err != nil {
		return nil, err
	}
	return c.decodeProcedures(recs)
}

// GetMany returns the procedures among names that exist, by name.
func (s *Store) GetMany(ctx context.Context, names []string) (map[string]*procedures.Procedure, error) {
	out := map[string]*procedures.Procedure{}
	if len(names) == 0 {
		return out, nil
	}
	seen := make(map[string]bool, len(names))
	unique := make([]string, 0, len(names))
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			unique = append(unique, n)
		}
	}
	ps, err := s.readByName(ctx, "get many", unique)
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		out[p.Name] = p
	}
	return out, nil
}

// ReferencedProcedures returns the stored procedures that some procedure's
// signature names, by name.
func (s *Store) ReferencedProcedures(ctx context.Context) ([]*procedures.Procedure, error) {
	return readTx(ctx, s, "referenced procedures", func(ctx context.Context, tx neo4j.ManagedTransaction) ([]*procedures.Procedure, error) {
		recs, err := collect(ctx, tx, "referenced_names", nil)
		if err != nil {
			return nil, err
		}
		names := recordNames(recs)
		if len(names) == 0 {
			return nil, nil
		}
		return s.byName(ctx, tx, names)
	})
}

// Find returns one page of the procedures matching q and their total, in
// one statement (findOne); only when classes keep appearing under it, in
// one read transaction, where summary filters first read the class
// counts (classes.cypher) and select the matching classes with
// procedures.Query.Match: the total is then their sum, unless causes or
// tools also filter (find_count.cypher counts those). The page is
// find_page.cypher; a query without filters uses find_all_page.cypher,
// which walks the procedure_rank index in order (no sort: its cost grows
// with offset + limit, not with the number of procedures), and
// find_all_count.cypher, which reads the count store.
func (s *Store) Find(ctx context.Context, q procedures.Query) ([]*procedures.Procedure, int, error) {
	params, err := findParams(q)
	if err != nil {
		return nil, 0, err
	}
	if len(q.Search) > 0 {
		ps, total, _, err := s.findSearch(ctx, q, params)
		return ps, total, err
	}
	if ps, total, _, ok, err := s.findOne(ctx, q, params); ok {
		return ps, total, err
	}
	pageQuery, countQuery := findQueries(q)
	type page struct {
		ps    []*procedures.Procedure
		total int
	}
	res, err := readTx(ctx, s, "find", func(ctx context.Context, tx neo4j.ManagedTransaction) (page, error) {
		total, known := 0, false
		if q.Summarised() {
			counts, err := classCounts(ctx, tx)
			if err != nil {
				return page{}, err
			}
			keys, n := matchingClasses(&q, counts)
			if len(keys) == 0 {
				return page{nil, 0}, nil
			}
			params["classes"] = keys
			total, known = n, len(q.Causes) == 0 && len(q.Tools) == 0
		}
		recs, err := collect(ctx, tx, pageQuery, params)
		if err != nil {
			return page{}, err
		}
		ps, err := s.decodeProcedures(recs)
		if err != nil {
			return page{}, err
		}
		if known {
			return page{ps, total}, nil
		}
		total = len(ps) + q.Offset
		// A page that is neither empty (the offset may be past the end) nor
		// full ends the order: its size gives the total.
		if q.SkipTotal && q.Limit > 0 && len(ps) == q.Limit {
			return page{ps, -1}, nil
		}
		if len(ps) == 0 || (q.Limit > 0 && len(ps) == q.Limit) {
			recs, err = collect(ctx, tx, countQuery, params)
			if err != nil {
				return page{}, err
			}
			if len(recs) != 1 {
				return page{}, errRows(countQuery, len(recs))
			}
			n, _ := field(recs[0], "total").(int64)
			total = int(n)
		}
		return page{ps, total}, nil
	})
	return res.ps, res.total, err
}

// findQueries returns the page and count queries Find runs for q.
func findQueries(q procedures.Query) (page, count string) {
	if len(q.Causes) == 0 && len(q.Tools) == 0 && !q.Summarised() {
		return "find_all_page", "find_all_count"
	}
	return "find_page", "find_count"
}

// findParams validates q (procedures.Query.Validate) and returns the
// parameters of find_page.cypher, find_count.cypher and
// find_filtered.cypher; "classes", the
// keys of the classes the summary filters select, is null (every class)
// until Find sets it.
func findParams(q procedures.Query) (map[string]any, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	limit := int64(noLimit)
	if q.Limit > 0 {
		limit = int64(q.Limit)
	}
	walk := int64(noLimit)
	if w := q.FindWalk(); w < noLimit {
		walk = int64(w)
	}
	return map[string]any{
		"classes":        nil,
		"tools":          stringList(q.Tools),
		"causes":         stringList(q.Causes),
		"offset":         q.Offset,
		"limit":          limit,
		"walk":           walk, // find_filtered.cypher, with bounded and boundedCallers
		"bounded":        q.Bounded,
		"boundedCallers": int64(q.BoundedCallers()),
	}, nil
}

// noLimit is the LIMIT of a query without one: large, and small enough that
// the server's SKIP + LIMIT does not overflow.
const noLimit = 1 << 50

func errRows(query string, n int) error {
	return fmt.Errorf("neo4j store: %s returned %d rows", query, n)
}
