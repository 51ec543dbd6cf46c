// Benchmark only, before cleanup.cypher: takes the namespace's procedures
// out of the class counts (fragments/class_sync.cypher) that Find's totals
// read, so the database's other procedures keep exact totals.
MATCH (p:Procedure) WHERE p.name STARTS WITH $proc AND p.class_key IS NOT NULL
WITH p.class_key AS key, count(*) AS n
MATCH (k:ProcedureClass {key: key})
SET k.count = k.count - n
RETURN sum(n) AS uncounted;
