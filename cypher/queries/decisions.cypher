// Audit records, newest first; null filters match everything.
MATCH (d:Decision)
WHERE ($procedure IS NULL OR d.procedure = $procedure)
  AND ($kind IS NULL OR d.kind = $kind)
RETURN d {.id, .kind, .procedure, .code_hash, .phase, .outcome, .reason, .actor,
          .allowed_tools, .at, .note, .suggestion} AS decision
ORDER BY d.at DESC, d.id DESC
LIMIT $limit;
