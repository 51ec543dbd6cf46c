// A session's policy for one code hash.
MATCH (p:SessionPolicy {id: $id})
RETURN p.record AS record;
