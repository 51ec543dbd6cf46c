// Replaces a locked turn's record (turn_lock.cypher).
MATCH (t:Turn {id: $id})
SET t.status = $status, t.deadline = $deadline, t.record = $record;
