// Drops the catalogue properties of the tools the new catalogue ($names)
// no longer lists (Store.PutCatalogue, before catalogue_put). Tool nodes
// stay: procedures still call them.
MATCH (t:Tool {in_catalogue: true})
WHERE NOT t.name IN $names
SET t.in_catalogue = false
REMOVE t.description, t.read_only, t.external_access, t.input_schema, t.output_schema, t.server, t.upstream_name, t.listed, t.contract, t.contract_key;
