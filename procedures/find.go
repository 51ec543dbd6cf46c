package procedures

import (
	"context"

	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/search"
)

// MaxFindLimit is a find's largest page (fields.Limit).
const MaxFindLimit = fields.MaxFindLimit

// FindRequest is find_all_procedures: filters apply before the limit.
type FindRequest struct {
	// Q is a relevance search (docs/api.md's q, search.Terms): "" for none.
	Q        string
	Causes   []string
	Tools    []string
	MinTools int
	Status   Status
	ReadOnly *bool
	Exposed  *bool
	Limit    int // 0 means fields.DefaultFindLimit
	Offset   int
	// SkipTotal: the total is not needed (Find may return -1 for it).
	SkipTotal bool
}

// Find returns the classified procedures matching r, frequency desc, then
// last_used_at desc, then name asc (with Q: by relevance, see search.RankHits),
// and the total before limit and offset.
// The read-only and exposed filters are decided by the store on the
// classification it keeps (see Store.Find), the same one Get recomputes.
// Returns fault.CodeInvalid as Query.Validate does, and fault.CodeBusy (reason
// searches) for a relevance search past Options.MaxConcurrentSearches
// (HoldSearch).
func (s *Service) Find(ctx context.Context, r FindRequest) ([]*Procedure, int, error) {
	page, total, _, err := s.find(ctx, r)
	return page, total, err
}

// find is Find, also returning the catalogue the page was classified with.
func (s *Service) find(ctx context.Context, r FindRequest) ([]*Procedure, int, *Catalogue, error) {
	if r.Limit == 0 {
		r.Limit = fields.DefaultFindLimit
	}
	q := Query{
		Causes: r.Causes, Tools: r.Tools, MinTools: r.MinTools, Status: r.Status,
		ReadOnly: r.ReadOnly, Exposed: r.Exposed, AllowMutating: s.opts.AllowMutatingAutorun,
		Limit: r.Limit, Offset: r.Offset, SkipTotal: r.SkipTotal,
	}
	if r.Q != "" {
		terms, err := search.Terms(r.Q)
		if err != nil {
			return nil, 0, nil, err
		}
		q.Search = terms
	}
	if err := q.Validate(); err != nil {
		return nil, 0, nil, err
	}
	if q.Search != nil {
		release, err := s.HoldSearch(ctx)
		if err != nil {
			return nil, 0, nil, err
		}
		defer release()
	}
	page, total, cat, err := s.findWithCatalogue(ctx, q)
	if err != nil {
		return nil, 0, nil, err
	}
	v, err := s.viewOf(ctx, cat, page)
	if err != nil {
		return nil, 0, nil, err
	}
	for _, p := range page {
		v.decorate(p)
	}
	return page, total, cat, nil
}

// CatalogueFinder is a Store that reads a Find page together with the
// current catalogue (in one transaction or statement): Service.Find then
// makes one read instead of two.
type CatalogueFinder interface {
	// FindWithCatalogue is Find(ctx, q) and Catalogue(ctx) read at once.
	// Returns the codes Find and Catalogue return.
	FindWithCatalogue(ctx context.Context, q Query) ([]*Procedure, int, *Catalogue, error)
}

// CatalogueGetter is a Store that reads one procedure together with the
// current catalogue (in one statement): Service.Get, a grant, a promote
// and a retirement then make one read instead of two.
type CatalogueGetter interface {
	// GetWithCatalogue is Get(ctx, name) and Catalogue(ctx) read at once.
	// Returns the codes Get and Catalogue return.
	GetWithCatalogue(ctx context.Context, name string) (*Procedure, *Catalogue, error)
}

// findWithCatalogue reads q's page and the current catalogue: at once when
// the store is a CatalogueFinder, else FindBeside.
func (s *Service) findWithCatalogue(ctx context.Context, q Query) (page []*Procedure, total int, cat *Catalogue, err error) {
	if cf, ok := s.store.(CatalogueFinder); ok {
		page, total, cat, err = cf.FindWithCatalogue(ctx, q)
	} else {
		page, total, cat, err = FindBeside(ctx, s.store, q)
	}
	if err == nil {
		s.holdCatalogue(cat)
	}
	return page, total, cat, err
}

// FindBeside reads q's page (store.Find) and the current catalogue
// (store.Catalogue) side by side: on Neo4j each is a round trip, and
// neither depends on the other. Returns what they return.
func FindBeside(ctx context.Context, store Store, q Query) ([]*Procedure, int, *Catalogue, error) {
	type read struct {
		cat *Catalogue
		err error
	}
	catalogue := make(chan read, 1)
	go func() {
		cat, err := store.Catalogue(ctx)
		catalogue <- read{cat, err}
	}()
	page, total, err := store.Find(ctx, q)
	c := <-catalogue
	if err != nil {
		return nil, 0, nil, err
	}
	if c.err != nil {
		return nil, 0, nil, c.err
	}
	return page, total, c.cat, nil
}

// Exposed returns the procedures offered to planners as proc__ tools, in
// find order, optionally limited to those linked to any of causes.
func (s *Service) Exposed(ctx context.Context, causes []string, limit int) ([]*Procedure, error) {
	return s.ExposedMatching(ctx, "", causes, limit)
}

// ExposedMatching is Exposed with a relevance search q ("" for none).
func (s *Service) ExposedMatching(ctx context.Context, q string, causes []string, limit int) ([]*Procedure, error) {
	exposed := true
	page, _, err := s.Find(ctx, FindRequest{Q: q, Causes: causes, Exposed: &exposed, Limit: limit, SkipTotal: true})
	return page, err
}
