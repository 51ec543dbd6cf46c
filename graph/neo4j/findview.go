package neo4jstore

import (
	"context"

	"github.com/procgraph/procgraph/procedures"
)

// FindWithCatalogue is Find and Catalogue at once (procedures.
// CatalogueFinder). A query is one statement that also answers the
// catalogue (findOne, findSearch: the tools travel only when the stored
// revision is not the one the store holds); only when classes keep
// appearing under findOne are the page and the catalogue read side by side
// (procedures.FindBeside).
func (s *Store) FindWithCatalogue(ctx context.Context, q procedures.Query) ([]*procedures.Procedure, int, *procedures.Catalogue, error) {
	params, err := findParams(q)
	if err != nil {
		return nil, 0, nil, err
	}
	if len(q.Search) > 0 {
		return s.findSearch(ctx, q, params)
	}
	known := s.catalogue.Load()
	params["known_catalogue"] = knownRevision(known)
	ps, total, row, ok, err := s.findOne(ctx, q, params)
	if ok && err != nil {
		return nil, 0, nil, err
	}
	if ok && row != nil {
		cat, err := s.catalogueSince(row, known)
		if err != nil {
			return nil, 0, nil, err
		}
		return ps, total, cat, nil
	}
	if ok { // answered without a statement (no class matches)
		cat, err := s.Catalogue(ctx)
		if err != nil {
			return nil, 0, nil, err
		}
		return ps, total, cat, nil
	}
	return procedures.FindBeside(ctx, s, q)
}
