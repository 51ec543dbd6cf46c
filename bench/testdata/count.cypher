// Benchmark only: the number of procedures in a kept namespace.
MATCH (p:Procedure) WHERE p.name STARTS WITH $proc
RETURN count(p) AS procedures;
