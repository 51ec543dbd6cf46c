// The stored catalogue: its revision (null when none was ever put) and its
// tools by name.
OPTIONAL MATCH (t:Tool {in_catalogue: true})
WITH t
ORDER BY t.name
WITH collect(t {.name, .description, .read_only, .external_access, .input_schema, .output_schema, .server, .upstream_name, .listed}) AS tools
OPTIONAL MATCH (c:Catalogue {id: 'current'})
RETURN c.revision AS revision, tools;
