// Dumped versions (Store.Load into an empty store, each applied once:
// created), with their baselines (null when the dump carries none:
// backfillBaselines gives them the current contracts when the store opens);
// the procedure's current one ($rows' current is the dump's
// current hash) is linked CURRENT and mirrored on the procedure, as
// capture.cypher does.
UNWIND $rows AS r
MATCH (p:Procedure {name: r.procedure})
CREATE (v:ProcedureVersion {id: r.id})
SET v.procedure = r.procedure, v.code_hash = r.code_hash, v.code = r.code, v.dialect = r.dialect,
    v.parameters = r.parameters, v.input_schema = r.input_schema, v.opaque = r.opaque, v.warnings = r.warnings,
    v.summary = r.summary, v.metadata = r.metadata, v.captured_at = r.captured_at, v.frequency = r.frequency,
    v.status = r.status, v.health = r.health, v.baseline = r.baseline, v.baseline_keys = r.baseline_keys
CREATE (p)-[:HAS_VERSION]->(v)
FOREACH (_ IN CASE WHEN r.current = r.code_hash THEN [1] ELSE [] END |
  CREATE (p)-[:CURRENT]->(v)
  SET p.status = r.status, p.opaque = r.opaque
)
RETURN count(v) AS loaded;
