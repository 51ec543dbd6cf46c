// One cause with its procedures, edge frequency desc then name. No row when
// the cause does not exist.
MATCH (c:Cause {name: $name})
OPTIONAL MATCH (c)-[e:INVESTIGATED_BY]->(p:Procedure)
WITH c, e, p
ORDER BY e.frequency DESC, p.name
RETURN c.name AS name, c.description AS description,
       collect(CASE WHEN p IS NULL THEN null ELSE {name: p.name, frequency: e.frequency} END) AS procedures;
