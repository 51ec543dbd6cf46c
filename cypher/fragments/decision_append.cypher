// Appends one audit record ($id, $kind, $procedure, ...), linked to its
// procedure when it exists, and returns created (this append made it) and
// same (the record under $id is this one). Appending the same record again
// (a transaction retried after a commit whose answer was lost) changes
// nothing; another record under the same id is the caller's conflict.
MERGE (d:Decision {id: $id})
  ON CREATE SET d.kind = $kind, d.procedure = $procedure, d.code_hash = $codeHash, d.phase = $phase,
    d.outcome = $outcome, d.reason = $reason, d.actor = $actor, d.allowed_tools = $allowedTools,
    d.at = $at, d.note = $note, d.suggestion = $suggestion, d.session = $session, d.result = $result, d._new = true
WITH d, d._new IS NOT NULL AS created
REMOVE d._new
WITH d, created
OPTIONAL MATCH (about:Procedure {name: $procedure})
FOREACH (_ IN CASE WHEN about IS NULL OR NOT created THEN [] ELSE [1] END |
  CREATE (d)-[:ABOUT]->(about)
)
RETURN created,
  coalesce(d.kind = $kind AND d.procedure = $procedure AND d.code_hash = $codeHash AND d.phase = $phase
    AND d.outcome = $outcome AND d.reason = $reason AND d.actor = $actor
    AND coalesce(d.allowed_tools = $allowedTools, d.allowed_tools IS NULL AND $allowedTools IS NULL)
    AND d.at = $at AND d.note = $note AND d.suggestion = $suggestion AND coalesce(d.session, "") = $session, false) AS same
