// One page of Find filtered by causes or tools (and maybe the summary
// filters), and what its total needs, in one statement alone in its
// transaction (findOne); the filters are fragments/find_where.
//
// The candidates: with tools, the procedures calling the tool of $tools
// that the fewest call (its degree, from the count store); without, every
// procedure. The page either walks the procedure_rank index in order,
// testing each procedure, until it is full (cost: the procedures walked,
// about (offset + limit) x all / matching), or takes the rarest tool's
// callers, tests them and sorts the matches by rank (cost: its degree):
// the second when degree^2 <= (offset + limit) x all. A tool no procedure
// calls (no Tool node) matches nothing.
//
// The filters are counted only when the page cannot tell the total: when
// it is empty (the offset may be past the end), or full and $skipTotal is
// false; otherwise the total is $offset + the page's size, and counted is
// 0. With tools the count tests the rarest tool's callers, else every
// procedure.
//
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
  MATCH (n:Procedure)
  RETURN count(n) AS everything
}
CALL {
  UNWIND $tools AS name
  OPTIONAL MATCH (t:Tool {name: name})
  WITH t, CASE WHEN t IS NULL THEN 0 ELSE COUNT { (t)<-[:CALLS]-() } END AS degree
  ORDER BY degree
  RETURN collect({tool: t, degree: degree})[0] AS rarest
}
WITH unknown, revision, same, tools, rarest.tool AS rare,
     rarest IS NOT NULL AND rarest.tool IS NULL AS none,
     rarest IS NOT NULL AND toFloat(rarest.degree) ^ 2 <= toFloat($offset + $limit) * toFloat(everything) AS expand
CALL {
  WITH rare, none, expand
  CALL {
    WITH rare, none, expand
    // (The branch not taken seeks past every rank: a filter on it alone
    // would be applied after the walk.)
    MATCH (p:Procedure)
    WHERE p.rank >= CASE WHEN none OR expand THEN '~' ELSE '' END AND
#include find_where
    WITH p
    ORDER BY p.rank
    SKIP $offset
    LIMIT $limit
    RETURN collect(
#include procedure
    ) AS page
    UNION ALL
    WITH rare, none, expand
    WITH CASE WHEN expand AND NOT none THEN rare END AS rare
    MATCH (rare)<-[:CALLS]-(p:Procedure)
    WHERE
#include find_where
    WITH p
    ORDER BY p.rank
    SKIP $offset
    LIMIT $limit
    RETURN collect(
#include procedure
    ) AS page
  }
  RETURN reduce(ps = [], page IN collect(page) | ps + page) AS procedures
}
WITH unknown, revision, same, tools, rare, none, procedures,
     size(procedures) = 0 OR (size(procedures) = $limit AND NOT $skipTotal) AS isCounted
CALL {
  WITH rare, none, isCounted
  CALL {
    WITH rare, none, isCounted
    MATCH (p:Procedure)
    WHERE p.rank >= CASE WHEN isCounted AND NOT none AND rare IS NULL THEN '' ELSE '~' END AND
#include find_where
    RETURN count(p) AS n
    UNION ALL
    WITH rare, isCounted
    WITH CASE WHEN isCounted THEN rare END AS rare
    MATCH (rare)<-[:CALLS]-(p:Procedure)
    WHERE
#include find_where
    RETURN count(p) AS n
  }
  RETURN sum(n) AS counted
}
RETURN unknown, procedures, isCounted, counted, revision, same, tools;
