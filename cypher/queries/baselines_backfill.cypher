// Gives up to $batch versions without a drift baseline (stored before drift
// was kept, or loaded from a dump without one) the current contracts of
// their procedure's tools (procedures.BaselineOf, as capture.cypher does),
// once: Store.Open runs it until it updates fewer than $batch.
MATCH (v:ProcedureVersion)
WHERE v.baseline IS NULL
WITH v
LIMIT $batch
MATCH (p:Procedure {name: v.procedure})
WITH v, p.signature AS baselineNames
WITH v,
#include baseline_tools
  AS bts
SET v.baseline =
#include baseline_json
  , v.baseline_keys = [t IN bts | t.contract_key]
RETURN count(v) AS updated;
