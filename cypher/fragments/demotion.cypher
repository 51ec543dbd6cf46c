// Procedure p's demotion after a run of its version v: the rule of
// procedures.DemotedAfter over $demote (procedures.DemoteParams: whether
// the run failed, the --demote-after setting and where v.health keeps its
// consecutive failures; null when there was no run, which changes
// nothing). Only a run of the current version changes it: a failure
// demotes once the consecutive failures reach the setting (0: never), a
// success lifts it. graph/neo4j's TestDemotionIsGos checks it against Go
// on every case. Binds wasDemoted (before the run); use.cypher and
// use_health.cypher name it, before class_sync.
WITH p, v, coalesce(p.demoted, false) AS wasDemoted
SET p.demoted = CASE
  WHEN $demote IS NULL OR v.code_hash <> p.code_hash THEN wasDemoted
  WHEN NOT $demote.failed THEN false
  ELSE wasDemoted OR ($demote.after > 0 AND coalesce(v.health[$demote.consecutive], 0) >= $demote.after)
END
WITH p, v, wasDemoted
