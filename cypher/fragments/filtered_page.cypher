// One page of Find filtered by tools or causes (and maybe the summary
// filters, fragments/find_where): the rows it adds are unknown (the
// classes with procedures that are not in $known, when $classes is set:
// the caller reads the classes again and asks again), procedures (the
// page, each the procedure fragment), complete (the page met every match)
// and, for a count after it (find_filtered.cypher), rare, rareDegree, none
// and fromCallers. Every variable before it is kept (WITH *). Read by
// find_filtered.cypher, and at the start of capture.cypher for the reuse
// suggestion's page, before the capture writes (procedures.CaptureInput.
// Page), so a new procedure's capture is one statement.
//
// The candidates: with tools, the procedures calling the tool of $tools
// that the fewest call (its degree, from the count store); without, every
// procedure. The page either walks the procedure_rank index in order,
// testing each procedure, until it is full, or takes the rarest tool's
// callers, tests them and sorts the matches by rank (cost: its degree):
// the second when degree^2 <= (offset + limit) x all, or when a walk of
// $walk entries (procedures.Query.FindWalk: bounded with tools, unbounded
// without) did not fill the page: matches are then sparser than the
// degree says (several tools each common but rarely together, a selective
// class filter). So with tools a page reads at most $walk entries and the
// rarest tool's callers, whatever the number of procedures. A $bounded
// page (procedures.Query.Bounded, advice) takes the callers only when
// there are at most $boundedCallers, and otherwise the walk alone, never
// both. A tool no procedure calls (no Tool node) matches nothing.
CALL {
  MATCH (k:ProcedureClass)
  WHERE $classes IS NOT NULL AND NOT k.key IN $known
  WITH k,
#include class_count
    AS n
  WHERE n > 0
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
WITH *, rarest.tool AS rare, rarest.degree AS rareDegree,
     rarest IS NOT NULL AND rarest.tool IS NULL AS none,
     rarest IS NOT NULL AND CASE WHEN $bounded THEN rarest.degree <= $boundedCallers
       ELSE toFloat(rarest.degree) ^ 2 <= toFloat($offset + $limit) * toFloat(everything) END AS expand
CALL {
  WITH none, expand
  // The walk, at most $walk entries (procedures.Query.FindWalk). (Not
  // taken, it seeks past every rank: a filter on it alone would be applied
  // after the walk.)
  MATCH (p:Procedure)
  WHERE p.rank >= CASE WHEN none OR expand THEN '~' ELSE '' END
  WITH p
  ORDER BY p.rank
  LIMIT $walk
  WITH p
  WHERE
#include find_where
  WITH p
  ORDER BY p.rank
  SKIP $offset
  LIMIT $limit
  RETURN collect(
#include procedure
  ) AS walked
}
CALL {
  // The rarest tool's callers: chosen, or the walk ended before its page
  // was full (the matches are sparser than the tool's callers).
  WITH rare, none, expand, walked
  WITH CASE WHEN NOT none AND (expand OR (size(walked) < $limit AND NOT $bounded)) THEN rare END AS rare
  CALL {
    WITH rare
    // (Only procedures call tools: no label to test.)
    MATCH (rare)<-[:CALLS]-(p)
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
  RETURN rare IS NOT NULL AS fromCallers, page
}
WITH *, CASE WHEN fromCallers THEN page ELSE walked END AS procedures,
     fromCallers OR none AS complete
