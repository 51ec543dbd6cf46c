// One page of Find without filters and its total, in one statement (one
// round trip): the total is the number of procedures, from the count store;
// the page walks the procedure_rank index in ascending order (p.rank is
// Find's order, see fragments/rank_set.cypher), so the server reads
// offset + limit index entries, whatever the number of procedures: the plan
// has no Sort. One row, the page in order, and the catalogue unless the
// caller holds it (fragments/catalogue_since.cypher).
#include catalogue_since
CALL {
  MATCH (n:Procedure)
  RETURN count(n) AS total
}
CALL {
  MATCH (p:Procedure)
  WHERE p.rank >= ''
  WITH p
  ORDER BY p.rank
  SKIP $offset
  LIMIT $limit
  RETURN collect(
#include procedure
  ) AS procedures
}
RETURN total, procedures, revision, same, tools;
