// One page of Find without filters: walks the procedure_rank index in
// ascending order (p.rank is Find's order, see fragments/rank_set.cypher), so the
// server reads offset + limit index entries, whatever the number of
// procedures: the plan has no Sort.
MATCH (p:Procedure)
WHERE p.rank >= ''
WITH p
ORDER BY p.rank
SKIP $offset
LIMIT $limit
RETURN
#include procedure
AS procedure;
