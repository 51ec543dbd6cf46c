// Stores the catalogue: its revision on the Catalogue node, and each tool's
// properties on its Tool node (input_schema and output_schema are JSON
// strings; server, upstream_name and listed null when empty; contract is the
// tool's procedures.ToolContract as JSON and contract_key its Key, which
// versions' baselines are made of).
MERGE (c:Catalogue {id: 'current'})
SET c.revision = $revision, c.tool_count = size($tools), c.updated_at = $at
WITH c
UNWIND $tools AS tool
MERGE (t:Tool {name: tool.name})
SET t.in_catalogue = true,
    t.description = tool.description,
    t.read_only = tool.read_only,
    t.external_access = tool.external_access,
    t.input_schema = tool.input_schema,
    t.output_schema = tool.output_schema,
    t.server = tool.server,
    t.upstream_name = tool.upstream_name,
    t.listed = tool.listed,
    t.contract = tool.contract,
    t.contract_key = tool.contract_key;
