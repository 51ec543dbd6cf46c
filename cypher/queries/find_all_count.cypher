// The total of Find without filters: the number of procedures, from the
// count store.
MATCH (p:Procedure)
RETURN count(p) AS total;
