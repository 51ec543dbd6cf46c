// One page of Find filtered by causes or tools (and maybe the summary
// filters), and what its total needs, in one statement alone in its
// transaction (Store.findFiltered). The page walks the procedure_rank index
// as find_page.cypher does, the filters (fragments/find_where.cypher)
// applied before SKIP and LIMIT. The filters are counted (a scan of every
// procedure they match) only when the page cannot tell the total: when it
// is empty (the offset may be past the end), or full and $skipTotal is
// false; otherwise the total is $offset + the page's size, and counted is 0.
// With summary filters, $classes are taken among $known, the classes the
// store has read: unknown lists the classes with procedures that are not
// in $known (the store then reads the classes again and asks again). The
// catalogue comes with the page (fragments/catalogue_since).
#include catalogue_since
CALL {
  MATCH (k:ProcedureClass)
  WHERE $classes IS NOT NULL AND k.count > 0 AND NOT k.key IN $known
  RETURN collect(k.key) AS unknown
}
CALL {
  MATCH (p:Procedure)
  WHERE p.rank >= '' AND
#include find_where
  WITH p
  ORDER BY p.rank
  SKIP $offset
  LIMIT $limit
  RETURN collect(
#include procedure
  ) AS procedures
}
CALL {
  WITH procedures
  UNWIND CASE WHEN size(procedures) = 0 OR (size(procedures) = $limit AND NOT $skipTotal) THEN [1] ELSE [] END AS _
  MATCH (p:Procedure)
  WHERE
#include find_where
  RETURN count(p) AS counted
}
RETURN unknown, procedures, size(procedures) = 0 OR (size(procedures) = $limit AND NOT $skipTotal) AS isCounted, counted,
       revision, same, tools;
