// Appends one audit record, linked to its procedure when it exists. A second
// record with the same id violates the decision_id constraint.
CREATE (d:Decision {
  id: $id, kind: $kind, procedure: $procedure, code_hash: $codeHash, phase: $phase,
  outcome: $outcome, reason: $reason, actor: $actor, allowed_tools: $allowedTools,
  at: $at, note: $note, suggestion: $suggestion
})
WITH d
OPTIONAL MATCH (p:Procedure {name: $procedure})
FOREACH (_ IN CASE WHEN p IS NULL THEN [] ELSE [1] END |
  CREATE (d)-[:ABOUT]->(p)
);
