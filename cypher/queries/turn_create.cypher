// Creates a pending turn unless $max turns are pending with a deadline after
// $now. The gate node's write lock serialises creators (on every instance),
// so the count and the create are atomic. Returns the count, the earliest
// deadline among them and whether the id existed; creates only when it
// returns pending < $max and exists = false.
MERGE (g:TurnGate {id: "gate"})
SET g.seq = coalesce(g.seq, 0) + 1
WITH g
OPTIONAL MATCH (t:Turn {status: "pending"})
WHERE t.deadline > $now
WITH count(t) AS pending, min(t.deadline) AS next
OPTIONAL MATCH (x:Turn {id: $id})
WITH pending, next, x IS NOT NULL AS exists
FOREACH (_ IN CASE WHEN pending < $max AND NOT exists THEN [1] ELSE [] END |
  CREATE (:Turn {id: $id, session: $session, status: $status, deadline: $deadline, record: $record}))
RETURN pending, next, exists;
