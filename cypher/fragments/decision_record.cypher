// Appends the audit record rec (a map: id, kind, procedure, codeHash,
// phase, outcome, reason, actor, allowedTools, at, note, suggestion,
// session, result), linked to its procedure when it exists, leaving rec,
// created (this append made it) and same (the record under rec.id is this
// one). Appending the same record again (a transaction retried after a
// commit whose answer was lost) changes nothing; another record under the
// same id is the caller's conflict.
MERGE (d:Decision {id: rec.id})
  ON CREATE SET d.kind = rec.kind, d.procedure = rec.procedure, d.code_hash = rec.codeHash, d.phase = rec.phase,
    d.outcome = rec.outcome, d.reason = rec.reason, d.actor = rec.actor, d.allowed_tools = rec.allowedTools,
    d.at = rec.at, d.note = rec.note, d.suggestion = rec.suggestion, d.session = rec.session, d.result = rec.result, d._new = true
WITH rec, d, d._new IS NOT NULL AS created
REMOVE d._new
WITH rec, d, created
OPTIONAL MATCH (about:Procedure {name: rec.procedure})
FOREACH (_ IN CASE WHEN about IS NULL OR NOT created THEN [] ELSE [1] END |
  CREATE (d)-[:ABOUT]->(about)
)
WITH rec, created,
  coalesce(d.kind = rec.kind AND d.procedure = rec.procedure AND d.code_hash = rec.codeHash AND d.phase = rec.phase
    AND d.outcome = rec.outcome AND d.reason = rec.reason AND d.actor = rec.actor
    AND coalesce(d.allowed_tools = rec.allowedTools, d.allowed_tools IS NULL AND rec.allowedTools IS NULL)
    AND d.at = rec.at AND d.note = rec.note AND d.suggestion = rec.suggestion AND coalesce(d.session, "") = rec.session, false) AS same
