// One use of a stored procedure (use.cypher: Store.RecordUse, the only
// statement of its write transaction; run_use.cypher: the use of
// Store.RecordRun), returning the procedure as it now is (the procedure
// fragment). No row when the
// procedure or the version ($hash, or the current one when $hash is null)
// does not exist: nothing is written then. Counting works as in capture.cypher.
MATCH (p:Procedure {name: $name})-[:HAS_VERSION]->(v:ProcedureVersion)
WHERE v.code_hash = coalesce($hash, p.code_hash)
SET p.updated_at = $at

// The usage key, once per version.
WITH p, v
MERGE (vk:UsageKey {id: 'v:' + toString(size(v.id)) + ':' + v.id + ':' + $key})
  ON CREATE SET vk.scope = 'version', vk.key = $key, vk.procedure = p.name, vk.code_hash = v.code_hash, vk.at = $at, vk._new = true
WITH p, v, vk, vk._new IS NOT NULL AS versionCounted
REMOVE vk._new
SET v.frequency = v.frequency + CASE WHEN versionCounted THEN 1 ELSE 0 END
// The run, when there is one ($health is its procedures.HealthDelta, or
// null): counted in the version's health.
FOREACH (_ IN CASE WHEN $health IS NULL THEN [] ELSE [1] END |
  SET v.health =
#include health_add
)
// A success of the current version lifts a demotion; the class follows.
WITH p, v
#include demotion
#include class_sync
// The replay's recording, when it keeps one.
#include recording_put

// Once per procedure; a replay also counts a use.
WITH p, wasDemoted
MERGE (pk:UsageKey {id: 'p:' + toString(size(p.name)) + ':' + p.name + ':' + $key})
  ON CREATE SET pk.scope = 'procedure', pk.key = $key, pk.procedure = p.name, pk.at = $at, pk._new = true
WITH p, wasDemoted, pk, pk._new IS NOT NULL AS counted
REMOVE pk._new
SET p.frequency = p.frequency + CASE WHEN counted THEN 1 ELSE 0 END,
    p.use_count = p.use_count + CASE WHEN $replay THEN 1 ELSE 0 END,
    // Replays may finish out of order: last_used_at never goes back.
    p.last_used_at = CASE WHEN $replay AND (p.last_used_at IS NULL OR p.last_used_at < $at) THEN $at ELSE p.last_used_at END
// The rank key Find orders by (fragments/rank_set.cypher), after every change
// of frequency or last_used_at.
#include rank_set

// The cause, its edge, and the key once per edge.
WITH p, counted, wasDemoted
CALL {
  WITH p
  UNWIND CASE WHEN $cause IS NULL THEN [] ELSE [$cause] END AS causeName
  MERGE (c:Cause {name: causeName})
    ON CREATE SET c.description = '', c.created_at = $at
  MERGE (c)-[e:INVESTIGATED_BY]->(p)
    ON CREATE SET e.frequency = 0
  MERGE (ck:UsageKey {id: 'c:' + toString(size(c.name)) + ':' + c.name + ':' + toString(size(p.name)) + ':' + p.name + ':' + $key})
    ON CREATE SET ck.scope = 'cause', ck.key = $key, ck.procedure = p.name, ck.cause = c.name, ck.at = $at, ck._new = true
  WITH e, ck, ck._new IS NOT NULL AS isNew
  REMOVE ck._new
  SET e.frequency = e.frequency + CASE WHEN isNew THEN 1 ELSE 0 END
  RETURN count(*) AS linked
}
RETURN counted, wasDemoted,
#include procedure
AS procedure
