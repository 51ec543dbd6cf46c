// The procedures named in $names that exist, each with its current version,
// causes and grant. The projection is the one find_page.cypher returns.
UNWIND $names AS name
MATCH (p:Procedure {name: name})
RETURN p {
  .name, .signature, .summary, .frequency, .use_count,
  .created_at, .updated_at, .last_used_at,
  .grant_enabled, .grant_by, .grant_at, .grant_reason, .grant_code_hash,
  .retired_at, .retired_by, .retired_reason,
  version: head([(p)-[:CURRENT]->(v:ProcedureVersion) |
    v {.code_hash, .code, .dialect, .parameters, .input_schema, .status, .opaque, .warnings}]),
  causes: [(c:Cause)-[e:INVESTIGATED_BY]->(p) | {name: c.name, frequency: e.frequency}]
} AS procedure;
