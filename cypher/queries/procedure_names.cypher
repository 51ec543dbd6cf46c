// A page of procedure names after $after, by name (Store.FinishLoad
// reclassifies every procedure after a merge).
MATCH (p:Procedure)
WHERE p.name > $after
RETURN p.name AS name
ORDER BY p.name
LIMIT $limit;
