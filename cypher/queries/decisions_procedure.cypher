// Audit records about one procedure ($procedure, not null), newest first:
// decisions.cypher walking the procedure's part of decision_procedure_at
// (procedure, then time) instead of the whole log's time index.
MATCH (d:Decision)
USING INDEX d:Decision(procedure, at)
WHERE d.procedure = $procedure AND d.at <= coalesce($until, $beforeAt, datetime('9999-12-31T00:00:00Z'))
  AND ($kind IS NULL OR d.kind = $kind)
  AND ($actor IS NULL OR d.actor = $actor)
  AND ($outcome IS NULL OR d.outcome = $outcome)
  AND ($since IS NULL OR d.at >= $since)
  AND ($until IS NULL OR d.at < $until)
  AND ($beforeId IS NULL OR d.at < $beforeAt OR (d.at = $beforeAt AND d.id < $beforeId))
RETURN d {.id, .kind, .procedure, .code_hash, .phase, .outcome, .reason, .actor,
          .allowed_tools, .at, .note, .suggestion, .session, .result} AS decision
ORDER BY d.at DESC, d.id DESC
LIMIT $limit;
