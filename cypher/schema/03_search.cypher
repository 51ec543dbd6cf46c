// Relevance search (Find with q): a full-text (Lucene) index over each
// procedure's search document (p.search_text, the distinct search parts of
// its captures: fragments/search_parts.cypher, in capture.cypher). Words are segmented and
// lowercased, without stemming or stop words, as the embedded store's
// bleve index does; updates are visible to the next transaction.
CREATE FULLTEXT INDEX procedure_search IF NOT EXISTS
FOR (p:Procedure) ON EACH [p.search_text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'standard-no-stop-words', `fulltext.eventually_consistent`: false}};
