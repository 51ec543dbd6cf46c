// Every cause with its number of procedures and the sum of its edge
// frequencies, by name.
MATCH (c:Cause)
OPTIONAL MATCH (c)-[e:INVESTIGATED_BY]->(:Procedure)
RETURN c.name AS name, c.description AS description, count(e) AS procedures, sum(coalesce(e.frequency, 0)) AS frequency
ORDER BY name;
