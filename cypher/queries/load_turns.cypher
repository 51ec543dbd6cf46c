// Dumped turns (Store.Load, also merging), as turn_create.cypher stores
// them: a turn the store holds is kept (loading into an empty store, only
// a resumed batch finds one: the same record).
UNWIND $rows AS r
MERGE (t:Turn {id: r.id})
  ON CREATE SET t.session = r.session, t.requested_by = r.requestedBy, t.status = r.status, t.deadline = r.deadline, t.record = r.record
RETURN count(t) AS loaded;
