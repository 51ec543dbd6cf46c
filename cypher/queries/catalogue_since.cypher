// The stored catalogue unless the caller holds it: its revision (null when
// none was ever put), whether it is $known, and its tools by name (read
// only when it is not $known). The store keeps the last catalogue it
// decoded by revision (catalogue_get.cypher reads it whole).
OPTIONAL MATCH (c:Catalogue {id: 'current'})
WITH c.revision AS revision
OPTIONAL MATCH (t:Tool {in_catalogue: true})
WHERE revision IS NULL OR revision <> $known
WITH revision, t
ORDER BY t.name
RETURN revision, revision IS NOT NULL AND revision = $known AS same,
       collect(t {.name, .description, .read_only, .external_access, .input_schema}) AS tools;
