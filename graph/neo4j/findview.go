package neo4j

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

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

// GetWithCatalogue is Get and Catalogue in one statement
// (procedure_catalogue.cypher, procedures.CatalogueGetter): the tools are
// sent only when the stored revision is not the one the store holds.
// Returns fault.CodeNotFound.
func (s *Store) GetWithCatalogue(ctx context.Context, name string) (*procedures.Procedure, *procedures.Catalogue, error) {
	known := s.catalogue.Load()
	recs, err := query(ctx, s, "get", neo4j.AccessModeRead, "procedure_catalogue", map[string]any{"name": name, "known_catalogue": knownRevision(known)})
	if err != nil {
		return nil, nil, err
	}
	if len(recs) != 1 {
		return nil, nil, s.mapError("get", errRows("procedure_catalogue", len(recs)))
	}
	found := asList(field(recs[0], "found"))
	if len(found) == 0 {
		return nil, nil, notFound(name)
	}
	p, err := s.decodeProcedure(found[0])
	if err != nil {
		return nil, nil, s.mapError("get", err)
	}
	cat, err := s.catalogueSince(recs[0], known)
	if err != nil {
		return nil, nil, err
	}
	return p, cat, nil
}
