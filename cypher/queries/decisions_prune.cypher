// Deletes up to $batch audit records older than $before
// (Store.PruneDecisions, run until it deletes fewer): a range seek on
// decision_at.
MATCH (d:Decision)
WHERE d.at < $before
WITH d LIMIT $batch
DETACH DELETE d
RETURN count(*) AS deleted;
