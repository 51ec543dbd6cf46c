// One page of Find filtered by causes or tools (and maybe the summary
// filters), and what its total needs, in one statement alone in its
// transaction (findOne); the filters are fragments/find_where.
//
// The page: fragments/filtered_page (a $bounded page counts nothing).
//
// The filters are counted only when the page cannot tell the total: when
// it is empty (the offset may be past the end), or full and $skipTotal is
// false; otherwise the total is $offset + the page's size, and counted is
// 0. The count, by the filters:
//   - one tool, no cause: read from counters, whatever the number of
//     procedures: without summary filters the tool's degree (its callers:
//     one CALLS relationship per procedure and tool of its signature), with
//     them the sum of the tool's counts in $classes (ToolClassShard and
//     ToolClass nodes, fragments/class_tools);
//   - several tools, or tools and causes: the rarest tool's callers, tested
//     (a count per tool and class cannot tell how many call all of them);
//   - causes, no tool: one cause without summary filters is the cause's
//     degree (one INVESTIGATED_BY per cause and procedure); otherwise the
//     procedures the causes investigate, tested (cost: their degrees).
//
// With summary filters, $classes are taken among $known, the classes the
// store has read: unknown lists the classes with procedures that are not
// in $known (the store then reads the classes again and asks again). The
// catalogue comes with the page (fragments/catalogue_since).
#include catalogue_since
#include filtered_page
WITH unknown, revision, same, tools, rare, rareDegree, none, complete, procedures,
     NOT $bounded AND (size(procedures) = 0 OR (size(procedures) = $limit AND NOT $skipTotal)) AS isCounted
CALL {
  WITH rare, rareDegree, none, isCounted
  CALL {
    // One tool, no cause: the counters.
    WITH rare, rareDegree, isCounted
    UNWIND CASE WHEN isCounted AND rare IS NOT NULL AND size($tools) = 1 AND size($causes) = 0 THEN [rare] ELSE [] END AS t
    CALL {
      // Its shards, and the counts of a version before them.
      WITH t
      CALL {
        WITH t
        MATCH (k:ToolClassShard {tool: t.name})
        WHERE k.key IN coalesce($classes, []) AND k.shard IS NOT NULL
        RETURN k.count AS n
        UNION ALL
        WITH t
        MATCH (k:ToolClass {tool: t.name})
        WHERE k.key IN coalesce($classes, [])
        RETURN k.count AS n
      }
      RETURN sum(n) AS inClasses
    }
    RETURN CASE WHEN $classes IS NULL THEN rareDegree ELSE inClasses END AS n
    UNION ALL
    // Several tools, or tools and causes: the rarest tool's callers.
    WITH rare, isCounted
    WITH CASE WHEN isCounted AND (size($tools) > 1 OR size($causes) > 0) THEN rare END AS rare
    MATCH (rare)<-[:CALLS]-(p)
    WHERE
#include find_where
    RETURN count(p) AS n
    UNION ALL
    // Causes, no tool.
    WITH isCounted
    UNWIND CASE WHEN isCounted AND size($tools) = 0 THEN $causes ELSE [] END AS name
    MATCH (c:Cause {name: name})
    WITH collect(c) AS cs
    CALL {
      WITH cs
      WITH cs[0] AS c WHERE size(cs) = 1 AND $classes IS NULL
      RETURN COUNT { (c)-[:INVESTIGATED_BY]->() } AS n
      UNION ALL
      WITH cs
      WITH cs WHERE size(cs) > 1 OR $classes IS NOT NULL
      UNWIND cs AS c
      MATCH (c)-[:INVESTIGATED_BY]->(p:Procedure)
      WHERE
#include find_where
      WITH DISTINCT p
      RETURN count(p) AS n
    }
    RETURN sum(n) AS n
  }
  RETURN sum(n) AS counted
}
// (complete: the page met every match, the callers read or none to read.)
RETURN unknown, procedures, isCounted, counted, complete, revision, same, tools;
