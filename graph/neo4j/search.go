package neo4jstore

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/procedures"
)

// luceneQuery is a search as a Lucene query: q's words and the tool terms
// (procedures.SearchTools), bare and ORed, each tool term with its boost.
// procedures.ValidTerms (checked by Query.Validate) guarantees the words
// hold lowercase letters and digits only, ValidSearchTools that the tool
// terms are lowercase identifiers: no Lucene operator or syntax.
func luceneQuery(words []string, tools []procedures.SearchTool) (string, error) {
	if !procedures.ValidSearchTools(tools) {
		return "", procedures.Errorf(procedures.CodeInternal, "neo4j store: search tool terms are not identifiers")
	}
	parts := append([]string(nil), words...)
	for _, t := range tools {
		parts = append(parts, t.Term+"^"+strconv.FormatFloat(t.Boost, 'f', -1, 64))
	}
	return strings.Join(parts, " OR "), nil
}

// findSearch is Find with q.Search (see procedures.Store): search.cypher
// gives the filtered matches, procedures.RankHits orders them, and the page
// is read by name, in one read transaction.
func (s *Store) findSearch(ctx context.Context, q procedures.Query, params map[string]any) ([]*procedures.Procedure, int, error) {
	cat, err := s.Catalogue(ctx)
	if err != nil {
		return nil, 0, err
	}
	lucene, err := luceneQuery(q.Search, procedures.SearchTools(cat, q.Search))
	if err != nil {
		return nil, 0, err
	}
	params["lucene"] = lucene
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
