// Creates a pending turn unless $max turns are pending with a deadline after
// $now, or $maxMine of them are $requestedBy's (a turn stored before the
// requester was kept on the node counts as everyone's: fail closed). The
// gate node's write lock serialises creators (on every instance), so the
// counts and the create are atomic. Returns both counts, the earliest
// deadline among each, whether the id existed and whether it created the
// turn (when pending < $max, mine < $maxMine and exists = false: the rule
// of procedures.PendingBounds.Admit, which names the refusal).
MERGE (g:TurnGate {id: "gate"})
SET g.seq = coalesce(g.seq, 0) + 1
WITH g
OPTIONAL MATCH (t:Turn {status: "pending"})
WHERE t.deadline > $now
WITH count(t) AS pending, min(t.deadline) AS next,
  count(CASE WHEN coalesce(t.requested_by, $requestedBy) = $requestedBy THEN t.deadline END) AS mine,
  min(CASE WHEN coalesce(t.requested_by, $requestedBy) = $requestedBy THEN t.deadline END) AS mineNext
OPTIONAL MATCH (x:Turn {id: $id})
WITH pending, next, mine, mineNext, x IS NOT NULL AS exists
WITH pending, next, mine, mineNext, exists, pending < $max AND mine < $maxMine AND NOT exists AS admit
FOREACH (_ IN CASE WHEN admit THEN [1] ELSE [] END |
  CREATE (:Turn {id: $id, session: $session, requested_by: $requestedBy, status: $status, deadline: $deadline, record: $record}))
RETURN pending, next, mine, mineNext, exists, admit AS created;
