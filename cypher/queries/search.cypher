// The procedures whose search document matches $lucene (OR of bare words,
// procedures.SearchTerms: no Lucene syntax), at most $hits by text
// relevance, that pass Find's other filters (as find_page.cypher: $classes
// selected by procedures.Query.Match in Go, all $tools, any of $causes).
// Go ranks them (procedures.RankHits) and reads the page.
CALL db.index.fulltext.queryNodes('procedure_search', $lucene, {limit: $hits})
YIELD node AS p, score
WHERE ($classes IS NULL OR p.class_key IN $classes)
  AND all(t IN $tools WHERE t IN p.signature)
  AND (size($causes) = 0 OR EXISTS { MATCH (c:Cause)-[:INVESTIGATED_BY]->(p) WHERE c.name IN $causes })
RETURN p.name AS name, score, p.frequency AS frequency, p.last_used_at AS last_used_at;
