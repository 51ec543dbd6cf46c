// A Procedure p as the store reads it back (decodeProcedure): a list of its
// properties, its current version without the code's metadata (a list, or
// null), its causes (a list of [name, frequency]), its grant and its
// retirement. Lists, not maps: the driver then builds no map and no key
// strings per value. The order is the store's procedureFields and
// versionFields (graph/neo4j/decode.go; TestProcedureFragmentFields checks
// it). Variables it binds are local to its comprehensions.
[
  p.name, p.signature, p.summary, p.frequency, p.use_count,
  p.created_at, p.updated_at, p.last_used_at,
  p.grant_enabled, p.grant_by, p.grant_at, p.grant_reason, p.grant_code_hash, p.grant_binding,
  p.retired_at, p.retired_by, p.retired_reason, p.demoted,
  head([(p)-[:CURRENT]->(cv:ProcedureVersion) |
    [cv.code_hash, cv.code, cv.dialect, cv.parameters, cv.input_schema, cv.status, cv.opaque, cv.warnings, cv.baseline, cv.health, cv.verification]]),
  [(c:Cause)-[e:INVESTIGATED_BY]->(p) | [c.name, e.frequency]]
]
