// Dumped audit records under their ids (Store.Load), linked to their
// procedure when it exists.
UNWIND $rows AS r
MERGE (d:Decision {id: r.id})
  ON CREATE SET d.kind = r.kind, d.procedure = r.procedure, d.code_hash = r.codeHash, d.phase = r.phase,
    d.outcome = r.outcome, d.reason = r.reason, d.actor = r.actor, d.allowed_tools = r.allowedTools,
    d.at = r.at, d.note = r.note, d.suggestion = r.suggestion, d.session = r.session, d.result = r.result
WITH d, r
OPTIONAL MATCH (about:Procedure {name: r.procedure})
FOREACH (a IN CASE WHEN about IS NULL THEN [] ELSE [about] END |
  MERGE (d)-[:ABOUT]->(a)
)
RETURN count(d) AS loaded;
