// A page of causes after $after, by name (Store.Dump).
MATCH (c:Cause)
WHERE c.name > $after
RETURN c.name AS name, coalesce(c.description, '') AS description
ORDER BY c.name
LIMIT $limit;
