// Makes the version $hash current and appends its decision (Store.Promote,
// alone in its transaction, which commits whatever this returns), only when
// that version exists and succeeded and the decision's id is free or holds
// this decision. The first write (a no-op SET) takes the procedure's write
// lock. Returns status (the version's, null when there is none), ok (the
// version succeeded), created and same of the decision append (null when
// not ok) and the procedure as it now is; no row when the procedure does
// not exist.
MATCH (p:Procedure {name: $name})
SET p.updated_at = p.updated_at
WITH p
OPTIONAL MATCH (p)-[:HAS_VERSION]->(v:ProcedureVersion {code_hash: $hash})
WITH p, v, v.status AS status, coalesce(v.status = 'succeeded', false) AS ok
OPTIONAL CALL {
  WITH ok
  WITH ok WHERE ok
#include decision_append
}
WITH p, v, status, ok, created, same, ok AND (created OR same) AS write
OPTIONAL MATCH (p)-[cur:CURRENT]->(:ProcedureVersion)
WITH p, v, status, ok, created, same, write, collect(cur) AS curs
FOREACH (r IN CASE WHEN write THEN curs ELSE [] END | DELETE r)
FOREACH (_ IN CASE WHEN write THEN [1] ELSE [] END |
  CREATE (p)-[:CURRENT]->(v)
  SET p.code_hash = v.code_hash, p.status = v.status, p.opaque = v.opaque, p.demoted = false
)
// What a grant on it decides by changed: the authorization revision moves.
WITH p, status, ok, created, same, write AS bump
#include auth_bump
// The class it is counted in follows.
WITH p, status, ok, created, same
#include class_sync
RETURN status, ok, created, same,
#include procedure
AS procedure;
