// One page of Find without filters: walks the procedure_rank index in
// ascending order (p.rank is Find's order, see fragments/rank_set.cypher), so the
// server reads offset + limit index entries, whatever the number of
// procedures: the plan has no Sort.
MATCH (p:Procedure)
WHERE p.rank >= ''
WITH p
ORDER BY p.rank
SKIP $offset
LIMIT $limit
RETURN p {
  .name, .signature, .summary, .frequency, .use_count,
  .created_at, .updated_at, .last_used_at,
  .grant_enabled, .grant_by, .grant_at, .grant_reason, .grant_code_hash,
  .retired_at, .retired_by, .retired_reason,
  version: head([(p)-[:CURRENT]->(v:ProcedureVersion) |
    v {.code_hash, .code, .dialect, .parameters, .input_schema, .status, .opaque, .warnings}]),
  causes: [(c:Cause)-[e:INVESTIGATED_BY]->(p) | {name: c.name, frequency: e.frequency}]
} AS procedure;
