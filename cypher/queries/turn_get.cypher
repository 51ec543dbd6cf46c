// One stored turn.
MATCH (t:Turn {id: $id})
RETURN t.record AS record;
