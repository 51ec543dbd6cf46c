// The stored catalogue unless the caller holds it, as one row: its revision
// (null when none was ever put), whether it is $known_catalogue, and its
// tools by name (read only when there is a revision and it is not
// $known_catalogue; a null $known_catalogue reads the revision alone). The
// store keeps the last catalogue it decoded by revision (catalogue_get.cypher
// reads it whole). Alone in catalogue_since.cypher; beside the page in
// find_all.cypher, find_classes.cypher and find_filtered.cypher, so that a
// Find and the catalogue it is decorated with are one statement
// (procedures.CatalogueFinder).
//
// The condition is the value the tools' index is sought with (null, which
// no tool has, when they are not wanted): as a WHERE of its own the planner
// applied it after reading every catalogue tool (PROFILE: one db hit per
// tool on every Find).
CALL {
  OPTIONAL MATCH (c:Catalogue {id: 'current'})
  RETURN c.revision AS revision
}
CALL {
  WITH revision
  MATCH (t:Tool)
  WHERE t.in_catalogue = CASE WHEN revision <> $known_catalogue THEN true END
  WITH t
  ORDER BY t.name
  RETURN collect(t {.name, .description, .read_only, .external_access, .input_schema, .output_schema, .server, .upstream_name, .listed}) AS tools
}
WITH *, revision IS NOT NULL AND revision = $known_catalogue AS same
