// Dumped versions merged into the store (Store.Load with merge, docs/dumps.md
// "Merging"): a version the store lacks is created as dumped but with
// frequency 0 (merge_usage.cypher counts its keys); one it holds becomes
// succeeded when the dumped one did, takes the earlier captured_at and the
// health of more runs, and keeps its baseline (the dump's only when it has
// none).
// r.current is the dump's current version of the procedure: it becomes
// the current one when the procedure has none yet (created by this
// merge), or when it succeeded and the procedure's current has not (as a
// capture of it would make it), with r.demoted, the dump's demotion of
// the procedure. The procedure mirrors its current
// version's hash, status and opacity, and stays counted in its class.
UNWIND $rows AS r
MATCH (p:Procedure {name: r.procedure})
MERGE (v:ProcedureVersion {id: r.id})
  ON CREATE SET v.procedure = r.procedure, v.code_hash = r.code_hash, v.code = r.code, v.dialect = r.dialect,
    v.parameters = r.parameters, v.input_schema = r.input_schema, v.opaque = r.opaque, v.warnings = r.warnings,
    v.summary = r.summary, v.metadata = r.metadata, v.captured_at = r.captured_at, v.frequency = 0,
    v.status = r.status, v.health = r.health, v._new = true
WITH p, r, v, v._new IS NOT NULL AS created
REMOVE v._new
FOREACH (_ IN CASE WHEN created THEN [1] ELSE [] END |
  CREATE (p)-[:HAS_VERSION]->(v)
)
SET v.status = CASE WHEN r.status = 'succeeded' THEN 'succeeded' ELSE v.status END,
    // dump.MergeHealth: the health of more runs (runs is its first element),
    // the store's on a tie.
    v.health = CASE WHEN coalesce(r.health[0], 0) > coalesce(v.health[0], 0) THEN r.health ELSE v.health END,
    v.captured_at = CASE WHEN r.captured_at < v.captured_at THEN r.captured_at ELSE v.captured_at END,
    v.baseline_keys = CASE WHEN v.baseline IS NULL THEN r.baseline_keys ELSE v.baseline_keys END,
    v.baseline = coalesce(v.baseline, r.baseline)
WITH p, r, v
OPTIONAL MATCH (p)-[cur:CURRENT]->(cv:ProcedureVersion)
WITH p, r, v, collect(cur) AS curs, collect(cv) AS cvs
WITH p, v, curs, r.demoted AS demoted,
     r.current = v.code_hash AND
#include becomes_current
     AS makeCurrent
FOREACH (x IN CASE WHEN makeCurrent THEN curs ELSE [] END | DELETE x)
FOREACH (_ IN CASE WHEN makeCurrent THEN [1] ELSE [] END |
  CREATE (p)-[:CURRENT]->(v)
)
SET p.code_hash = CASE WHEN makeCurrent THEN v.code_hash ELSE p.code_hash END,
    // The dump's current version comes with the dump's demotion.
    p.demoted = CASE WHEN makeCurrent THEN coalesce(demoted, false) ELSE p.demoted END
// The status and opacity follow the current version once every row's
// CURRENT is set: each clause reads for all rows before the next writes, so
// a row that read the current version another row of the batch then
// replaced would set the replaced one's status (it did, when that row came
// later in code-hash order).
WITH DISTINCT p
MATCH (p)-[:CURRENT]->(c:ProcedureVersion)
SET p.status = c.status, p.opaque = c.opaque
WITH p
#include class_sync
RETURN count(p) AS merged;
