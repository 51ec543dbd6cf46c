package neo4j

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/procedures"
)

// Catalogue returns the stored catalogue: the tools whose Tool nodes are in
// the catalogue, by name, and the stored revision; an empty catalogue when
// none was ever put. The last one decoded is kept with its revision and
// shared (a Catalogue is not modified after NewCatalogue): the statement
// (catalogue_since.cypher) sends the tools only when the stored revision
// differs from it, so a change made by another instance is seen at once.
func (s *Store) Catalogue(ctx context.Context) (*procedures.Catalogue, error) {
	known := s.catalogue.Load()
	recs, err := query(ctx, s, "catalogue", neo4j.AccessModeRead, "catalogue_since", map[string]any{"known_catalogue": knownRevision(known)})
	if err != nil {
		return nil, err
	}
	if len(recs) != 1 {
		return nil, s.mapError("catalogue", errRows("catalogue_since", len(recs)))
	}
	return s.catalogueSince(recs[0], known)
}

// heldCatalogue is the catalogue the store holds, read (Catalogue) when it
// holds none.
func (s *Store) heldCatalogue(ctx context.Context) (*procedures.Catalogue, error) {
	if cat := s.catalogue.Load(); cat != nil {
		return cat, nil
	}
	return s.Catalogue(ctx)
}

// knownRevision is the revision of the catalogue the store holds ("" for
// none: every stored revision differs from it).
func knownRevision(known *procedures.Catalogue) string {
	if known == nil {
		return ""
	}
	return known.Revision
}

// sameCatalogue reports whether cat is the stored catalogue of revision
// rev (as the catalogue node reads: storedRevisions).
func sameCatalogue(cat *procedures.Catalogue, rev string) bool {
	return slices.Contains(storedRevisions(cat), rev)
}

// storedRevisions are the revisions the catalogue node reads as
// (coalesce(cat.revision, ”)) when cat is the stored catalogue: its
// revision, and for the empty catalogue also "" (none was ever put).
func storedRevisions(cat *procedures.Catalogue) []string {
	if len(cat.Tools) == 0 {
		return []string{"", cat.Revision}
	}
	return []string{cat.Revision}
}

// catalogueSince is the catalogue of a row of fragments/catalogue_since
// asked with known's revision: known itself when the row says it is the
// same, else the row's tools, then kept as the known one.
func (s *Store) catalogueSince(rec *neo4j.Record, known *procedures.Catalogue) (*procedures.Catalogue, error) {
	if same, _ := field(rec, "same").(bool); same && known != nil {
		return known, nil
	}
	c, err := decodeCatalogue([]*neo4j.Record{rec})
	if err != nil {
		return nil, s.mapError("catalogue", err)
	}
	// Indexed by ReadCatalogue, so it can be shared; the stored revision is kept.
	shared, err := procedures.ReadCatalogue(c.Tools)
	if err != nil {
		return nil, s.mapError("catalogue", fmt.Errorf("neo4j store: stored catalogue is invalid: %w", err))
	}
	shared.Revision = c.Revision
	s.catalogue.Store(shared)
	return shared, nil
}

// catalogueIn reads the stored catalogue inside tx.
func catalogueIn(ctx context.Context, tx neo4j.ManagedTransaction) (*procedures.Catalogue, error) {
	recs, err := collect(ctx, tx, "catalogue_get", nil)
	if err != nil {
		return nil, err
	}
	return decodeCatalogue(recs)
}

// decodeCatalogue reads the answer of catalogue_get.cypher.
func decodeCatalogue(recs []*neo4j.Record) (*procedures.Catalogue, error) {
	if len(recs) != 1 {
		return nil, errRows("catalogue_get", len(recs))
	}
	revision, _ := field(recs[0], "revision").(string)
	list, _ := field(recs[0], "tools").([]any)
	if revision == "" {
		return procedures.NewCatalogue(nil)
	}
	tools := make([]procedures.Tool, 0, len(list))
	for _, v := range list {
		r := &row{m: asMap(v)}
		t := procedures.Tool{
			Name:           r.str("name"),
			Description:    r.str("description"),
			ReadOnly:       r.bool("read_only"),
			ExternalAccess: r.bool("external_access"),
			Server:         r.str("server"),
			UpstreamName:   r.str("upstream_name"),
			Listed:         r.str("listed"),
		}
		r.json("input_schema", &t.InputSchema)
		r.json("output_schema", &t.OutputSchema)
		if r.err != nil {
			return nil, r.err
		}
		tools = append(tools, t)
	}
	return procedures.StoredCatalogue(tools, revision), nil
}

// PutCatalogue replaces the stored catalogue in one write transaction:
// tools it no longer lists lose their catalogue properties
// (catalogue_clear.cypher), the others get them (catalogue_put.cypher), and
// the procedures whose classification depends on a tool that changed are
// reclassified (procedures.ChangedTools, procedures.Affected).
func (s *Store) PutCatalogue(ctx context.Context, c *procedures.Catalogue) error {
	if c == nil {
		return invalid("tools", "a catalogue is required")
	}
	at := dbTime(time.Now())
	_, err := writeTx(ctx, s, "put catalogue", func(ctx context.Context, tx neo4j.ManagedTransaction) (struct{}, error) {
		if err := putCatalogueIn(ctx, tx, c, at); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, exec(ctx, tx, "auth_bump", nil)
	})
	return err
}

// putCatalogueIn is PutCatalogue inside tx (also Store.Load's).
func putCatalogueIn(ctx context.Context, tx neo4j.ManagedTransaction, c *procedures.Catalogue, at time.Time) error {
	names := make([]string, len(c.Tools))
	tools := make([]map[string]any, len(c.Tools))
	for i, t := range c.Tools {
		schema, err := jsonString(t.InputSchema)
		if err != nil {
			return invalid("tools.input_schema", "the input schema of tool %q is not JSON", t.Name)
		}
		out, err := jsonString(t.OutputSchema)
		if err != nil {
			return invalid("tools.output_schema", "the output schema of tool %q is not JSON", t.Name)
		}
		contract := procedures.ContractOf(t)
		cj, err := json.Marshal(contract)
		if err != nil {
			return invalid("tools", "the contract of tool %q is not JSON", t.Name)
		}
		names[i] = t.Name
		tools[i] = map[string]any{
			"name":            t.Name,
			"description":     t.Description,
			"read_only":       t.ReadOnly,
			"external_access": t.ExternalAccess,
			"input_schema":    schema,
			"output_schema":   out,
			"server":          nullIfEmpty(t.Server),
			"upstream_name":   nullIfEmpty(t.UpstreamName),
			"listed":          nullIfEmpty(t.Listed),
			"contract":        string(cj),
			"contract_key":    contract.Key(),
		}
	}
	if err := lockCatalogueAt(ctx, tx, at); err != nil {
		return err
	}
	old, err := catalogueIn(ctx, tx)
	if err != nil {
		return err
	}
	if err := exec(ctx, tx, "catalogue_clear", map[string]any{"names": names}); err != nil {
		return err
	}
	if err := exec(ctx, tx, "catalogue_put", map[string]any{"revision": c.Revision, "tools": tools, "at": at}); err != nil {
		return err
	}
	affected, err := procedures.Affected(txClasses{ctx, tx}, procedures.ChangedTools(old, c))
	if err != nil {
		return err
	}
	return reclassify(ctx, tx, affected)
}

// nullIfEmpty is s, or null for "" (a property not set).
func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
