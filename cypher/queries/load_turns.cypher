// Dumped turns (Store.Load), as turn_create.cypher stores them.
UNWIND $rows AS r
MERGE (t:Turn {id: r.id})
SET t.session = r.session, t.status = r.status, t.deadline = r.deadline, t.record = r.record
RETURN count(t) AS loaded;
