// Locks one turn for a transition (the write lock is held until commit, so
// concurrent resolvers and runners on every instance take turns) and
// returns its stored record.
MATCH (t:Turn {id: $id})
SET t.seq = coalesce(t.seq, 0) + 1
RETURN t.record AS record;
