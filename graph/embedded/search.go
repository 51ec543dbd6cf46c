package embedded

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"strconv"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/search"
)

// The relevance search of the embedded store: a bleve index beside the
// bbolt file (PATH.search), over each procedure's search document
// (search.Document of the distinct procedures.SearchParts of its
// captures). bbolt is the truth: the parts live in the search bucket, and
// every write that changes them bumps metaSearchGen in the same
// transaction; after the commit the write hands the changed names to the
// indexer (indexer.go), which indexes them and records the generation the
// index holds, and a search waits for what was handed over before it
// began. At Open, an index that is missing, unreadable or of another
// generation is rebuilt from the bucket, so a crash between the commit and
// the indexing loses nothing.

var (
	bSearch       = []byte("search")     // name → search parts (JSON []string)
	metaSearchGen = []byte("search_gen") // u64, bumped by each write that changes parts
	searchGenKey  = "procgraph_search_gen"
)

// searchField is the indexed field of a document.
const searchField = "text"

// searchMapping indexes the text field with Unicode word segmentation and
// lowercasing, no stemming and no stop words (as Neo4j's
// standard-no-stop-words), scored by BM25.
func searchMapping() (*mapping.IndexMappingImpl, error) {
	m := bleve.NewIndexMapping()
	if err := m.AddCustomAnalyzer("procgraph", map[string]any{
		"type": custom.Name, "tokenizer": unicode.Name, "token_filters": []string{lowercase.Name},
	}); err != nil {
		return nil, err
	}
	m.DefaultAnalyzer = "procgraph"
	m.ScoringModel = "bm25"
	doc := bleve.NewDocumentStaticMapping()
	f := bleve.NewTextFieldMapping()
	f.Analyzer = "procgraph"
	f.Store = false
	f.IncludeTermVectors = false
	doc.AddFieldMappingsAt(searchField, f)
	m.DefaultMapping = doc
	return m, nil
}

// openSearch opens the index at path, rebuilding it from the bucket when it
// is missing, unreadable or stale, and starts its indexer.
func (s *Store) openSearch(path string) error {
	var gen uint64
	if err := s.db.View(func(tx *bolt.Tx) error {
		gen = getU64(tx.Bucket(bMeta).Get(metaSearchGen))
		return nil
	}); err != nil {
		return err
	}
	idx, err := bleve.Open(path)
	if err == nil {
		v, gerr := idx.GetInternal([]byte(searchGenKey))
		if have, perr := strconv.ParseUint(string(v), 10, 64); gerr == nil && perr == nil && have == gen {
			s.search = newSearchIndex(idx, s.db, s.log, gen)
			return nil
		}
		s.log.Warn().Msg("search index is stale: rebuilding it")
		_ = idx.Close()
	} else if !errors.Is(err, bleve.ErrorIndexPathDoesNotExist) {
		s.log.Warn().Err(err).Msg("search index is unreadable: rebuilding it")
	}
	if err := os.RemoveAll(path); err != nil {
		return err
	}
	m, err := searchMapping()
	if err != nil {
		return err
	}
	if idx, err = bleve.New(path, m); err != nil {
		return err
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		b := idx.NewBatch()
		err := tx.Bucket(bSearch).ForEach(func(k, v []byte) error {
			if err := indexParts(b, string(k), v); err != nil {
				return err
			}
			if b.Size() >= indexBatchSize {
				if err := idx.Batch(b); err != nil {
					return err
				}
				b.Reset()
			}
			return nil
		})
		if err != nil {
			return err
		}
		b.SetInternal([]byte(searchGenKey), []byte(strconv.FormatUint(gen, 10)))
		return idx.Batch(b)
	})
	if err != nil {
		_ = idx.Close()
		return err
	}
	s.search = newSearchIndex(idx, s.db, s.log, gen)
	return nil
}

// indexParts adds to b the document of name whose stored search parts are
// v, or its deletion when v is nil.
func indexParts(b *bleve.Batch, name string, v []byte) error {
	if v == nil {
		b.Delete(name)
		return nil
	}
	var parts []string
	if err := decode(v, &parts, "search parts of "+name); err != nil {
		return err
	}
	return b.Index(name, map[string]any{searchField: search.Document(parts)})
}

// searchDocs is what a write transaction changed in the search bucket: the
// names to index after it commits, and the generations it took, (from,
// to]. A batched transaction may run more than once: it is reset at each
// run.
type searchDocs struct {
	names    map[string]struct{}
	from, to uint64
}

// searchAdd merges the search parts of in into its procedure's, inside tx;
// a change is noted in d.
func searchAdd(tx *bolt.Tx, in *procedures.CaptureInput, d *searchDocs) error {
	b, err := tx.CreateBucketIfNotExists(bSearch)
	if err != nil {
		return err
	}
	var old []string
	if v := b.Get([]byte(in.Name)); v != nil {
		if err := json.Unmarshal(v, &old); err != nil {
			return err
		}
	}
	parts := search.MergeParts(old, procedures.SearchParts(*in))
	if len(parts) == len(old) {
		return nil
	}
	return putSearchParts(tx, in.Name, parts, d)
}

// putSearchParts sets name's search parts inside tx, bumps the generation
// and notes the name and the generation in d.
func putSearchParts(tx *bolt.Tx, name string, parts []string, d *searchDocs) error {
	v, err := json.Marshal(parts)
	if err != nil {
		return err
	}
	if err := tx.Bucket(bSearch).Put([]byte(name), v); err != nil {
		return err
	}
	meta := tx.Bucket(bMeta)
	prev := getU64(meta.Get(metaSearchGen))
	if err := meta.Put(metaSearchGen, binary.BigEndian.AppendUint64(nil, prev+1)); err != nil {
		return err
	}
	if d.names == nil {
		d.names, d.from = map[string]struct{}{}, prev
	}
	d.names[name] = struct{}{}
	d.to = prev + 1
	return nil
}

// indexDocs hands what a committed transaction changed to the indexer; a
// search that begins after it returns finds it.
func (s *Store) indexDocs(d *searchDocs) {
	if s.search != nil {
		s.search.enqueue(d)
	}
}

// SearchIndexState reports the writes committed and not yet in the search
// index, and whether an index update failed (searches then answer
// CodeUnavailable until the next Open rebuilds the index).
func (s *Store) SearchIndexState() (pending uint64, failed bool) {
	if s.search == nil {
		return 0, false
	}
	return s.search.state()
}

// closeSearch indexes what is pending, stops the indexer and closes the
// index.
func (s *Store) closeSearch() error {
	if s.search == nil {
		return nil
	}
	return s.search.close()
}

// findSearch is Find with q.Search: the MaxSearchHits best matches of the
// index for q's words and the tool terms of the stored catalogue
// (search.Tools), filtered by q's other filters and ranked by
// search.RankHits. The catalogue and the page are read in one read
// transaction, after the indexer has indexed every write that returned
// before the search began. CodeUnavailable when ctx ends while it waits or
// the indexer failed (indexer.go).
func (s *Store) findSearch(ctx context.Context, q *procedures.Query) ([]*procedures.Procedure, int, error) {
	if s.search == nil {
		return nil, 0, fault.Errorf(fault.CodeUnavailable, "embedded store: no search index")
	}
	if err := s.search.wait(ctx); err != nil {
		return nil, 0, err
	}
	var out []*procedures.Procedure
	var total int
	err := s.view(ctx, func(tx *bolt.Tx) error {
		cat, err := s.catalogueIn(tx)
		if err != nil {
			return err
		}
		req, err := searchRequest(q.Search, search.Tools(cat, q.Search))
		if err != nil {
			return err
		}
		res, err := s.search.idx.SearchInContext(ctx, req)
		if err != nil {
			return fault.Errorf(fault.CodeUnavailable, "embedded store: search failed: %v", err)
		}
		m := newMatcher(q)
		byName, rank := tx.Bucket(bRankByName), tx.Bucket(bRank)
		causes, tools := tx.Bucket(bEdgesCP), tx.Bucket(bToolProcs)
		hits := make([]search.Hit, 0, len(res.Hits))
		for _, h := range res.Hits {
			rk := byName.Get([]byte(h.ID))
			if len(rk) < 16 || m.filters() && !m.match(rank.Get(rk)) {
				continue
			}
			if !hasAnyCause(causes, q.Causes, h.ID) || !hasAllTools(tools, q.Tools, h.ID) {
				continue
			}
			freq, lastUsed := rankFields(rk)
			hits = append(hits, search.Hit{Name: h.ID, Text: h.Score, Frequency: freq, LastUsedAt: lastUsed})
		}
		search.RankHits(hits)
		total = len(hits)
		r := s.newProcReader(tx)
		for _, h := range search.Page(hits, q.Offset, q.Limit) {
			p, err := r.load(h.Name)
			if err != nil {
				return err
			}
			score := h.Score
			p.Score = &score
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// searchRequest is the bleve request of a search: a disjunction of q's
// words and the tool terms, each boosted as search.Tools says,
// for the MaxSearchHits best documents.
func searchRequest(words []string, tools []search.Tool) (*bleve.SearchRequest, error) {
	if !search.ValidTools(tools) {
		return nil, fault.Errorf(fault.CodeInternal, "embedded store: search tool terms are not identifiers")
	}
	terms := make([]query.Query, 0, len(words)+len(tools))
	for _, t := range words {
		tq := bleve.NewTermQuery(t)
		tq.SetField(searchField)
		terms = append(terms, tq)
	}
	for _, t := range tools {
		tq := bleve.NewTermQuery(t.Term)
		tq.SetField(searchField)
		tq.SetBoost(t.Boost)
		terms = append(terms, tq)
	}
	return bleve.NewSearchRequestOptions(bleve.NewDisjunctionQuery(terms...), search.MaxHits, 0, false), nil
}

func hasAnyCause(b *bolt.Bucket, causes []string, name string) bool {
	if len(causes) == 0 {
		return true
	}
	for _, c := range causes {
		if b.Get(key(c, name)) != nil {
			return true
		}
	}
	return false
}

func hasAllTools(b *bolt.Bucket, tools []string, name string) bool {
	for _, t := range tools {
		if b.Get(key(t, name)) == nil {
			return false
		}
	}
	return true
}
