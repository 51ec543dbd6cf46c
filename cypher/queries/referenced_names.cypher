// The names of the stored procedures that some procedure's signature names
// (nested proc__ references are CALLS edges to a Tool of that name).
MATCH (:Procedure)-[:CALLS]->(t:Tool)
WHERE t.name STARTS WITH 'proc__'
WITH DISTINCT t.name AS name
MATCH (p:Procedure {name: name})
RETURN p.name AS name
ORDER BY name;
