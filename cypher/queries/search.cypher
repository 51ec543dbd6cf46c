// One page of a relevance search (Find with q) and its total, in one
// statement (one round trip). The procedures whose search document matches
// $lucene (q's bare words and the catalogue's tool terms, ORed:
// search.Terms and search.Tools, no Lucene syntax), at
// most $hits by text relevance, that pass Find's other filters
// (fragments/find_where.cypher, as Find's statements apply them), are
// ranked here, the one ranking of a Neo4j search (docs/adr/0016):
// fragments/search_score.cypher (search.Score) and search_order.cypher
// (search.Compare's order);
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
  WHERE
#include find_where
  WITH p, score,
#include search_score
    AS ranked
#include search_order
  RETURN collect(p) AS hits, collect(ranked) AS ranks
}
WITH revision, same, tools, unknown, size(hits) AS total, hits[$from..$to] AS page, ranks[$from..$to] AS scores
RETURN revision, same, tools, unknown, total, scores, [p IN page |
#include procedure
  ] AS procedures;
