// Procedure p's demotion after a run of its version v: the rule of
// procedures.DemotedAfter over $demote (procedures.DemoteParams: whether
// the run's failure counts toward demotion, the --demote-after setting,
// where v.health keeps the demotion streak and its two caller slots, and
// procedures.CallerSpan; null when there was no run, which changes
// nothing). Only a counted failure of the current version can demote:
// once the streak reaches the setting (0: never) and its failures came
// from two callers or more (the caller slots' sum is not the span:
// procedures.SeveralCallers). No run lifts a demotion. graph/neo4j's
// TestDemotionIsGos checks it against Go on every case. Binds wasDemoted
// (before the run); use.cypher and use_health.cypher name it, before
// class_sync.
WITH p, v, coalesce(p.demoted, false) AS wasDemoted
SET p.demoted = CASE
  WHEN wasDemoted OR $demote IS NULL OR v.code_hash <> p.code_hash OR NOT $demote.counted THEN wasDemoted
  ELSE $demote.after > 0 AND coalesce(v.health[$demote.streak], 0) >= $demote.after
    AND coalesce(v.health[$demote.hi], 0) <> 0 AND coalesce(v.health[$demote.lo], 0) <> 0
    AND coalesce(v.health[$demote.hi], 0) + coalesce(v.health[$demote.lo], 0) <> $demote.span
END
WITH p, v, wasDemoted, NOT wasDemoted AND coalesce(p.demoted, false) AS bump
// A demotion ends what a grant on p decided: the authorization revision moves.
#include auth_bump
WITH p, v, wasDemoted
