// Dumped versions (Store.Load); the procedure's current one is linked
// CURRENT and mirrored on the procedure, as capture.cypher does.
UNWIND $rows AS r
MATCH (p:Procedure {name: r.procedure})
MERGE (v:ProcedureVersion {id: r.id})
SET v.procedure = r.procedure, v.code_hash = r.code_hash, v.code = r.code, v.dialect = r.dialect,
    v.parameters = r.parameters, v.input_schema = r.input_schema, v.opaque = r.opaque, v.warnings = r.warnings,
    v.summary = r.summary, v.metadata = r.metadata, v.captured_at = r.captured_at, v.frequency = r.frequency,
    v.status = r.status
MERGE (p)-[:HAS_VERSION]->(v)
FOREACH (_ IN CASE WHEN p.code_hash = v.code_hash THEN [1] ELSE [] END |
  MERGE (p)-[:CURRENT]->(v)
  SET p.status = v.status, p.opaque = v.opaque
)
RETURN count(v) AS loaded;
