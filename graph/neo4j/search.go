package neo4jstore

import (
	"context"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/procedures"
)

// luceneQuery is the search terms as a Lucene query: the bare words ORed.
// procedures.ValidTerms (checked by Query.Validate) guarantees they hold
// letters and digits only, lowercase: no Lucene operator or syntax.
func luceneQuery(terms []string) string { return strings.Join(terms, " OR ") }

// findSearch is Find with q.Search (see procedures.Store): search.cypher
// gives the filtered matches, procedures.RankHits orders them, and the page
// is read by name, in one read transaction.
func (s *Store) findSearch(ctx context.Context, q procedures.Query, params map[string]any) ([]*procedures.Procedure, int, error) {
	params["lucene"] = luceneQuery(q.Search)
	params["hits"] = procedures.MaxSearchHits
	type page struct {
		ps    []*procedures.Procedure
		total int
	}
	res, err := readTx(ctx, s, "search", func(ctx context.Context, tx neo4j.ManagedTransaction) (page, error) {
		if q.Summarised() {
			counts, err := classCounts(ctx, tx)
			if err != nil {
				return page{}, err
			}
			keys, _ := matchingClasses(&q, counts)
			if len(keys) == 0 {
				return page{nil, 0}, nil
			}
			params["classes"] = keys
		}
		recs, err := collect(ctx, tx, "search", params)
		if err != nil {
			return page{}, err
		}
		hits := make([]procedures.SearchHit, 0, len(recs))
		for _, rec := range recs {
			h := procedures.SearchHit{}
			h.Name, _ = field(rec, "name").(string)
			h.Text, _ = field(rec, "score").(float64)
			h.Frequency, _ = field(rec, "frequency").(int64)
			if t, ok := field(rec, "last_used_at").(time.Time); ok {
				h.LastUsedAt = t.UnixMilli()
			}
			hits = append(hits, h)
		}
		procedures.RankHits(hits)
		want := procedures.PageOf(hits, &q)
		if len(want) == 0 {
			return page{nil, len(hits)}, nil
		}
		names := make([]string, len(want))
		for i, h := range want {
			names[i] = h.Name
		}
		ps, err := byName(ctx, tx, names)
		if err != nil {
			return page{}, err
		}
		byN := make(map[string]*procedures.Procedure, len(ps))
		for _, p := range ps {
			byN[p.Name] = p
		}
		out := make([]*procedures.Procedure, 0, len(want))
		for _, h := range want {
			if p := byN[h.Name]; p != nil {
				score := h.Score
				p.Score = &score
				out = append(out, p)
			}
		}
		return page{out, len(hits)}, nil
	})
	return res.ps, res.total, err
}
