// One page of Find: the filters (the same as find_count.cypher) apply before
// SKIP and LIMIT; order is frequency desc, last_used_at desc with never-used
// last, name asc: the order of p.rank, read from its range index, so the
// scan stops once the page is full. Null parameters and empty lists match
// everything.
// The summary filters (status, min tools, read-only, exposed) are $classes:
// the keys of the classes procedures.Query.Match selected in Go
// (fragments/class_sync.cypher); nothing here derives read-only or exposure.
MATCH (p:Procedure)
WHERE p.rank >= '' AND
#include find_where
WITH p
ORDER BY p.rank
SKIP $offset
LIMIT $limit
RETURN
#include procedure
AS procedure;
