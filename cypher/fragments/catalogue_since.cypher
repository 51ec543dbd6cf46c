// The stored catalogue unless the caller holds it, as one row: its revision
// (null when none was ever put), whether it is $known_catalogue, and its
// tools by name (read only when the revision is not $known_catalogue; a null
// $known_catalogue reads the revision alone). The store keeps the last
// catalogue it decoded by revision (catalogue_get.cypher reads it whole).
// Alone in catalogue_since.cypher; beside the page in find_all.cypher,
// find_classes.cypher and find_filtered.cypher, so that a Find and the
// catalogue it is decorated with are one statement
// (procedures.CatalogueFinder).
CALL {
  OPTIONAL MATCH (c:Catalogue {id: 'current'})
  WITH c.revision AS revision
  OPTIONAL MATCH (t:Tool {in_catalogue: true})
  WHERE revision IS NULL OR revision <> $known_catalogue
  WITH revision, t
  ORDER BY t.name
  RETURN revision, revision IS NOT NULL AND revision = $known_catalogue AS same,
         collect(t {.name, .description, .read_only, .external_access, .input_schema}) AS tools
}
