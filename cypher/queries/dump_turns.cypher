// A page of turns (approvals) after $after, by id (Store.Dump).
MATCH (t:Turn)
WHERE t.id > $after
RETURN t.id AS id, t.record AS record
ORDER BY t.id
LIMIT $limit;
