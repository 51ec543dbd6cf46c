// Appends one audit record ($id, $kind, $procedure, ...: the record the
// decision_record fragment appends) and returns created and same.
UNWIND [{id: $id, kind: $kind, procedure: $procedure, codeHash: $codeHash, phase: $phase, outcome: $outcome, reason: $reason,
  actor: $actor, allowedTools: $allowedTools, at: $at, note: $note, suggestion: $suggestion, session: $session, result: $result}] AS rec
#include decision_record
RETURN created, same
