// Stores the catalogue: its revision on the Catalogue node, and each tool's
// properties on its Tool node (input_schema is a JSON string).
MERGE (c:Catalogue {id: 'current'})
SET c.revision = $revision, c.tool_count = size($tools), c.updated_at = $at
WITH c
UNWIND $tools AS tool
MERGE (t:Tool {name: tool.name})
SET t.in_catalogue = true,
    t.description = tool.description,
    t.read_only = tool.read_only,
    t.external_access = tool.external_access,
    t.input_schema = tool.input_schema;
