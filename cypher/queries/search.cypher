// One page of a relevance search (Find with q) and its total, in one
// statement (one round trip). The procedures whose search document matches
// $lucene (q's bare words and the catalogue's tool terms, ORed:
// search.Terms and search.Tools, no Lucene syntax), at
// most $hits by text relevance, that pass Find's other filters (as
// find_page.cypher: $classes selected by procedures.Query.Match in Go, all
// $tools, any of $causes), are ranked here, the one ranking of a Neo4j
// search (docs/adr/0016): search.Score (its weight is $frequency_weight:
// text × (1 + weight × ln(1 + frequency)) to 6 decimals), then
// search.Compare's order (frequency, last_used_at (never used last), name);
// scores are the page's scores, which Go answers as they are; the page is
// [$from, $to) of the ranked list (Go clamps offset
// and limit to $hits: list indexes are 32-bit). revision, same and tools
// are the stored catalogue unless it is $known_catalogue, the one $lucene's
// tool terms come from (fragments/catalogue_since.cypher); unknown lists
// classes with procedures that are not in $known (null when no summary
// filter): either differing, the store retries with the new ones.
#include catalogue_since
CALL {
  MATCH (k:ProcedureClass)
  WHERE $known IS NOT NULL AND NOT k.key IN $known
  WITH k,
#include class_count
    AS n
  WHERE n > 0
  RETURN collect(k.key) AS unknown
}
CALL {
  CALL db.index.fulltext.queryNodes('procedure_search', $lucene, {limit: $hits})
  YIELD node AS p, score
  WHERE ($classes IS NULL OR p.class_key IN $classes)
    AND all(t IN $tools WHERE t IN p.signature)
    AND (size($causes) = 0 OR EXISTS { MATCH (c:Cause)-[:INVESTIGATED_BY]->(p) WHERE c.name IN $causes })
  WITH p, score, round(score * (1 + $frequency_weight * log(1 + p.frequency)), 6) AS ranked
  ORDER BY ranked DESC, p.frequency DESC, p.last_used_at IS NULL, p.last_used_at DESC, p.name
  RETURN collect(p) AS hits, collect(ranked) AS ranks
}
WITH revision, same, tools, unknown, size(hits) AS total, hits[$from..$to] AS page, ranks[$from..$to] AS scores
RETURN revision, same, tools, unknown, total, scores, [p IN page |
#include procedure
  ] AS procedures;
