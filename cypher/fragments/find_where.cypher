// The filters of Find on a Procedure p (find_page.cypher, find_count.cypher,
// find_filtered.cypher), one WHERE condition: $classes are the keys of the
// classes procedures.Query.Match selected in Go (null: every class; see
// fragments/class_sync.cypher), $tools the tools p must all call, $causes
// the causes of which one must investigate p (empty lists match
// everything). Nothing here derives read-only or exposure.
// The class is tested first (a CASE: the planner does not reorder it), so
// a procedure of another class costs one property read.
CASE WHEN $classes IS NULL OR p.class_key IN $classes
  THEN all(t IN $tools WHERE t IN p.signature)
    AND (size($causes) = 0 OR EXISTS { MATCH (c:Cause)-[:INVESTIGATED_BY]->(p) WHERE c.name IN $causes })
  ELSE false
END
