// The total of Find before SKIP and LIMIT when it filters on causes or
// tools: the filters of find_page.cypher. (Summary filters alone need no
// count: Find sums the counts of the matching classes.)
MATCH (p:Procedure)
WHERE ($classes IS NULL OR p.class_key IN $classes)
  AND all(t IN $tools WHERE t IN p.signature)
  AND (size($causes) = 0 OR EXISTS { MATCH (c:Cause)-[:INVESTIGATED_BY]->(p) WHERE c.name IN $causes })
RETURN count(p) AS total;
