// One page of Find filtered by the summary filters only, and its total, in
// one statement (one round trip). $classes are the keys of the classes
// procedures.Query.Match selected in Go among $known, the classes the store
// has read (classes.cypher): the total is the sum of their counts
// (fragments/class_count) and the
// page walks the procedure_rank index as find_page.cypher does. unknown
// lists the classes with procedures that are not in $known: when it is not
// empty the answer may miss some, and the store reads the classes again.
// Nothing here derives read-only or exposure. The catalogue comes with the
// page unless the caller holds it (fragments/catalogue_since.cypher).
#include catalogue_since
CALL {
  MATCH (k:ProcedureClass)
  WHERE NOT k.key IN $known
  WITH k,
#include class_count
    AS n
  WHERE n > 0
  RETURN collect(k.key) AS unknown
}
CALL {
  MATCH (k:ProcedureClass)
  WHERE k.key IN $classes
  RETURN coalesce(sum(
#include class_count
  ), 0) AS total
}
CALL {
  MATCH (p:Procedure)
  WHERE p.rank >= '' AND p.class_key IN $classes
  WITH p
  ORDER BY p.rank
  SKIP $offset
  LIMIT $limit
  RETURN collect(
#include procedure
  ) AS procedures
}
RETURN unknown, total, procedures, revision, same, tools;
