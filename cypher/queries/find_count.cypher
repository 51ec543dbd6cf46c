// The total of Find before SKIP and LIMIT: the filters of find_page.cypher.
MATCH (p:Procedure)
WHERE ($status IS NULL OR p.status = $status)
  AND size(p.signature) >= $minTools
  AND all(t IN $tools WHERE t IN p.signature)
  AND (size($causes) = 0 OR EXISTS { MATCH (c:Cause)-[:INVESTIGATED_BY]->(p) WHERE c.name IN $causes })
WITH p, CASE WHEN $readOnly IS NULL AND $exposed IS NULL THEN null
             ELSE all(n IN p.signature WHERE $readOnlySet[n] IS NOT NULL) END AS readOnly
WHERE ($readOnly IS NULL OR readOnly = $readOnly)
  AND ($exposed IS NULL OR $exposed = (p.status = 'succeeded' AND NOT p.opaque AND size(p.signature) >= 2 AND (readOnly OR $allowMutating)))
RETURN count(p) AS total;
