// Lifts procedure $name's demotion (Store.LiftDemotion, after the
// catalogue's revision was checked in the same transaction): when it is
// demoted and $hash (null: any) is its current version, it is no longer
// demoted and its current version's demotion streak starts again
// ($health: procedures.StreakReset, applied by health_add to a version
// that ran); its class follows. Returns demoted and current as they were
// (nothing is written unless both hold). No row: no such procedure.
MATCH (p:Procedure {name: $name})
SET p.updated_at = p.updated_at
WITH p
MATCH (p)-[:HAS_VERSION]->(v:ProcedureVersion)
WHERE v.code_hash = p.code_hash
WITH p, v, coalesce(p.demoted, false) AS demoted, ($hash IS NULL OR v.code_hash = $hash) AS current
FOREACH (_ IN CASE WHEN demoted AND current THEN [1] ELSE [] END |
  SET p.demoted = false,
      v.health = CASE WHEN v.health IS NULL THEN null ELSE
#include health_add
      END
)
WITH p, demoted, current
#include class_sync
RETURN demoted, current;
