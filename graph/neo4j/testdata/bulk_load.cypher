// Test only: loads procedures that bulkStore.CaptureBatch aggregated in Go
// (new procedures, one succeeded version each), in the shape capture.cypher
// leaves them: the same nodes, edges, counts and usage keys.
UNWIND $rows AS row
CREATE (p:Procedure {
  name: row.name, signature: row.signature, summary: row.summary,
  frequency: size(row.keys), use_count: 0, created_at: row.createdAt, updated_at: row.updatedAt,
  code_hash: row.hash, status: 'succeeded', opaque: row.opaque
})
// The rank key, as capture.cypher sets it (never used).
#include rank_set
CREATE (v:ProcedureVersion {
  id: row.versionId, procedure: row.name, code_hash: row.hash, code: row.code, dialect: row.dialect,
  parameters: row.parameters, opaque: row.opaque, summary: row.summary, captured_at: row.capturedAt,
  status: 'succeeded', frequency: size(row.keys)
})
CREATE (p)-[:HAS_VERSION]->(v)
CREATE (p)-[:CURRENT]->(v)
FOREACH (toolName IN row.signature |
  MERGE (t:Tool {name: toolName})
  CREATE (p)-[:CALLS]->(t)
)
FOREACH (k IN row.keys |
  CREATE (:UsageKey {id: 'p:' + toString(size(row.name)) + ':' + row.name + ':' + k, scope: 'procedure', key: k, procedure: row.name, at: row.updatedAt})
  CREATE (:UsageKey {id: 'v:' + toString(size(row.versionId)) + ':' + row.versionId + ':' + k, scope: 'version', key: k, procedure: row.name, code_hash: row.hash, at: row.updatedAt})
)
FOREACH (c IN row.causes |
  MERGE (cn:Cause {name: c.name})
    ON CREATE SET cn.description = c.description, cn.created_at = row.createdAt
  CREATE (cn)-[:INVESTIGATED_BY {frequency: size(c.keys)}]->(p)
  FOREACH (k IN c.keys |
    CREATE (:UsageKey {id: 'c:' + toString(size(c.name)) + ':' + c.name + ':' + toString(size(row.name)) + ':' + row.name + ':' + k, scope: 'cause', key: k, procedure: row.name, cause: c.name, at: row.updatedAt})
  )
);
