package neo4j

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/search"
)

// luceneQuery is a search as a Lucene query: q's words and the tool terms
// (search.Tools), bare and ORed, each tool term with its boost.
// search.ValidTerms (checked by Query.Validate) guarantees the words
// hold lowercase letters and digits only, ValidSearchTools that the tool
// terms are lowercase identifiers: no Lucene operator or syntax.
func luceneQuery(words []string, tools []search.Tool) (string, error) {
	if !search.ValidTools(tools) {
		return "", fault.Errorf(fault.CodeInternal, "neo4j store: search tool terms are not identifiers")
	}
	parts := append([]string(nil), words...)
	for _, t := range tools {
		parts = append(parts, t.Term+"^"+strconv.FormatFloat(t.Boost, 'f', -1, 64))
	}
	return strings.Join(parts, " OR "), nil
}

// searchAttempts bounds the reads of a search whose catalogue or classes
// changed under it (search.cypher reports both).
const searchAttempts = 3

// findSearch is Find with q.Search (see procedures.Store), once the index
// shows this store's own writes (awaitSearch): search.cypher
// matches, filters, ranks (search.Score, search.Compare) and pages in one
// statement alone in its transaction — one round trip, with the page's
// procedures — whatever the number of matches. The tool terms come from
// the catalogue the store last read and the summary filters' classes from
// the classes it last read (as findOne); the statement answers the stored
// catalogue when it is not that one (fragments/catalogue_since.cypher) and
// any class it did not know, and a search that used a stale one is run
// again with the new one (the last attempt's answer stands). The page is
// answered as search.cypher ranked it (decodeSearch). cat is the stored
// catalogue the answer was computed with.
func (s *Store) findSearch(ctx context.Context, q procedures.Query, params map[string]any) ([]*procedures.Procedure, int, *procedures.Catalogue, error) {
	if err := s.awaitSearch(ctx); err != nil {
		return nil, 0, nil, err
	}
	cat, err := s.heldCatalogue(ctx)
	if err != nil {
		return nil, 0, nil, err
	}
	var classes map[string]procedures.Class
	if q.Summarised() {
		classes = s.classes.get()
	}
	params["hits"] = search.MaxHits
	params["frequency_weight"] = search.FrequencyWeight
	params["known"] = nil
	from, to := min(q.Offset, search.MaxHits), search.MaxHits
	if q.Limit > 0 {
		to = min(from+q.Limit, search.MaxHits)
	}
	params["from"], params["to"] = from, to
	var unknown []any // the classes the last attempt did not know
	for attempt := 1; ; attempt++ {
		last := attempt == searchAttempts
		lucene, err := luceneQuery(q.Search, search.Tools(cat, q.Search))
		if err != nil {
			return nil, 0, nil, err
		}
		params["lucene"], params["known_catalogue"] = lucene, knownRevision(cat)
		if q.Summarised() {
			if classes == nil || len(unknown) > 0 {
				if classes, err = s.readClasses(ctx); err != nil {
					return nil, 0, nil, err
				}
			}
			params["classes"], params["known"] = selectClasses(classes, q)
		}
		recs, err := query(ctx, s, "search", neo4j.AccessModeRead, "search", params)
		if err != nil {
			return nil, 0, nil, err
		}
		if len(recs) != 1 {
			return nil, 0, nil, s.mapError("search", errRows("search", len(recs)))
		}
		rev, _ := field(recs[0], "revision").(string)
		stale := !sameCatalogue(cat, rev)
		if stale {
			if cat, err = s.catalogueSince(recs[0], cat); err != nil {
				return nil, 0, nil, err
			}
		}
		unknown, _ = field(recs[0], "unknown").([]any)
		if !last && (stale || len(unknown) > 0) {
			continue
		}
		ps, total, err := s.decodeSearch(recs[0])
		return ps, total, cat, err
	}
}

// decodeSearch decodes the row of search.cypher: the page, in the order
// search.cypher ranked it, each with the score it was ranked by, and the
// total. Go trusts the page: it neither re-scores nor re-sorts it
// (docs/adr/0016).
func (s *Store) decodeSearch(rec *neo4j.Record) ([]*procedures.Procedure, int, error) {
	ps, total, err := s.decodeFound([]*neo4j.Record{rec}, "search")
	if err != nil {
		return nil, 0, err
	}
	scores, _ := field(rec, "scores").([]any)
	if len(scores) != len(ps) {
		return nil, 0, s.mapError("search", fmt.Errorf("search: %d scores for %d procedures", len(scores), len(ps)))
	}
	for i, p := range ps {
		score, ok := scores[i].(float64)
		if !ok {
			return nil, 0, s.mapError("search", fmt.Errorf("search: score %d is %T, not a float", i, scores[i]))
		}
		p.Score = &score
	}
	return ps, total, nil
}
