// Audit records, newest first; null filters match everything ($since
// inclusive, $until exclusive). $beforeAt and
// $beforeId (both null, or the time and id of a stored decision) page back.
MATCH (d:Decision)
WHERE ($procedure IS NULL OR d.procedure = $procedure)
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
