// A run of a stored version that is not a replay (UseInput.HealthOnly: a
// failed run, a turn's run of the version's code; use_health.cypher:
// Store.RecordUse, the only statement of its write transaction;
// run_use_health.cypher: the use of Store.RecordRun): it counts in the version's
// health only (and keeps its recording, when a successful one keeps one),
// returning the procedure as it now is (the procedure
// fragment). No row when the procedure or the version ($hash, or the
// current one when $hash is null) does not exist: nothing is written then.
// Like use.cypher it locks the procedure first (its updated_at), so runs of
// one procedure add to its health one after another.
MATCH (p:Procedure {name: $name})-[:HAS_VERSION]->(v:ProcedureVersion)
WHERE v.code_hash = coalesce($hash, p.code_hash)
SET p.updated_at = p.updated_at
SET v.health =
#include health_add
// A failure of the current version may demote the procedure, a success
// lift its demotion; the class follows.
WITH p, v
#include demotion
#include class_sync
// The run's recording, when it keeps one (a turn's successful run).
#include recording_put
RETURN wasDemoted,
#include procedure
AS procedure
