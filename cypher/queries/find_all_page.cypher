// One page of Find without filters: like find.cypher, walking the
// procedure_frequency index from the highest frequency down, so the server
// reads the top of the order rather than every procedure.
MATCH (p:Procedure)
WHERE p.frequency >= 0
WITH p
ORDER BY p.frequency DESC, p.last_used_at IS NULL, p.last_used_at DESC, p.name
SKIP $offset
LIMIT $limit
RETURN p {
  .name, .signature, .summary, .frequency, .use_count,
  .created_at, .updated_at, .last_used_at,
  .grant_enabled, .grant_by, .grant_at, .grant_reason, .grant_code_hash,
  version: head([(p)-[:CURRENT]->(v:ProcedureVersion) |
    v {.code_hash, .code, .dialect, .parameters, .input_schema, .status, .opaque, .warnings}]),
  causes: [(c:Cause)-[e:INVESTIGATED_BY]->(p) | {name: c.name, frequency: e.frequency}]
} AS procedure;
