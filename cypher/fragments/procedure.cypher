// A Procedure p as the store reads it back (decodeProcedure): its
// properties, its current version without the code's metadata, its causes,
// its grant and its retirement. Variables it binds are local to its
// comprehensions. find_page.cypher and find_all_page.cypher return the same.
p {
  .name, .signature, .summary, .frequency, .use_count,
  .created_at, .updated_at, .last_used_at,
  .grant_enabled, .grant_by, .grant_at, .grant_reason, .grant_code_hash,
  .retired_at, .retired_by, .retired_reason,
  version: head([(p)-[:CURRENT]->(cv:ProcedureVersion) |
    cv {.code_hash, .code, .dialect, .parameters, .input_schema, .status, .opaque, .warnings}]),
  causes: [(c:Cause)-[e:INVESTIGATED_BY]->(p) | {name: c.name, frequency: e.frequency}]
}
