// A page of audit records after ($at, $id), oldest first (Store.Dump): a
// range seek on decision_at.
MATCH (d:Decision)
WHERE d.at >= $at AND (d.at > $at OR d.id > $id)
RETURN d {.id, .kind, .procedure, .code_hash, .phase, .outcome, .reason, .actor,
          .allowed_tools, .at, .note, .suggestion, .session, .result} AS decision
ORDER BY d.at, d.id
LIMIT $limit;
