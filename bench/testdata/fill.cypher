// Benchmark only: loads new procedures (one succeeded version each, one
// usage key) in the shape Store.Capture leaves them, fast: classified as it
// would classify them (their tools are in no catalogue: not read-only, no
// problem) and counted in their class.
UNWIND $rows AS row
CREATE (p:Procedure {
  name: row.name, signature: row.signature, summary: row.summary,
  frequency: row.frequency, use_count: 0, created_at: row.at, updated_at: row.at,
  code_hash: row.hash, status: 'succeeded', opaque: false
})
SET p.read_only = false, p.problem = ''
#include rank_set
CREATE (v:ProcedureVersion {
  id: row.name + '|' + row.hash, procedure: row.name, code_hash: row.hash, code: row.code, dialect: 'starlark',
  parameters: [], opaque: false, summary: row.summary, captured_at: row.at,
  status: 'succeeded', frequency: row.frequency, input_schema: '{"type":"object","properties":{}}'
})
CREATE (p)-[:HAS_VERSION]->(v)
CREATE (p)-[:CURRENT]->(v)
FOREACH (toolName IN row.signature |
  MERGE (t:Tool {name: toolName})
  CREATE (p)-[:CALLS]->(t)
)
FOREACH (k IN row.keys |
  CREATE (:UsageKey {id: 'p:' + toString(size(row.name)) + ':' + row.name + ':' + k, scope: 'procedure', key: k, procedure: row.name, at: row.at})
  CREATE (:UsageKey {id: 'v:' + toString(size(row.name + '|' + row.hash)) + ':' + row.name + '|' + row.hash + ':' + k, scope: 'version', key: k, procedure: row.name, code_hash: row.hash, at: row.at})
)
WITH p
#include class_sync
RETURN count(p) AS loaded;
