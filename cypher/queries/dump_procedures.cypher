// A page of procedures after $after, by name, each with its current
// version's hash, its versions and its cause edges (Store.Dump).
MATCH (p:Procedure)
WHERE p.name > $after
WITH p
ORDER BY p.name
LIMIT $limit
RETURN p {
  .name, .signature, .summary, .frequency, .use_count,
  .created_at, .updated_at, .last_used_at,
  .grant_enabled, .grant_by, .grant_at, .grant_reason, .grant_code_hash, .grant_binding,
  .retired_at, .retired_by, .retired_reason, .demoted, .search_parts,
  current: head([(p)-[:CURRENT]->(cv:ProcedureVersion) | cv.code_hash]),
  versions: [(p)-[:HAS_VERSION]->(v:ProcedureVersion) |
    v {.code_hash, .code, .dialect, .parameters, .input_schema, .opaque, .warnings, .summary, .metadata,
       .captured_at, .frequency, .status, .health, .baseline}],
  edges: [(c:Cause)-[e:INVESTIGATED_BY]->(p) | {cause: c.name, frequency: e.frequency}]
} AS procedure;
