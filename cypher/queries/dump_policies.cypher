// A page of session policies after $after, by id (session, 0, code hash:
// the order of session then code hash) (Store.Dump).
MATCH (p:SessionPolicy)
WHERE p.id > $after
RETURN p.id AS id, p.record AS record
ORDER BY p.id
LIMIT $limit;
