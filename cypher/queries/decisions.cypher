// Audit records, newest first; null filters match everything ($since
// inclusive, $until exclusive). $beforeAt and $beforeId (both null, or the
// time and id of a stored decision) page back. The time index is walked
// newest first (decision_at) and the filters checked on the way, so a page
// stops once it is full whatever the log's size.
MATCH (d:Decision)
USING INDEX d:Decision(at)
WHERE d.at <= coalesce($until, $beforeAt, datetime('9999-12-31T00:00:00Z'))
  AND ($procedure IS NULL OR d.procedure = $procedure)
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
