// Relevance search (Find with q): a full-text (Lucene) index over each
// procedure's search document (p.search_text, the distinct search parts of
// its captures: fragments/search_parts.cypher, in capture.cypher). Words are segmented and
// lowercased, without stemming or stop words, as the embedded store's
// bleve index does.
//
// The index is eventually consistent: a commit that writes search_text does
// not wait for Lucene to apply and refresh it (a strongly consistent index
// made a new procedure's capture wait 3–10 ms for that). The store keeps
// read-your-writes for its own writes by waiting for the refresh before a
// search that follows one (graph/neo4j/searchfresh.go); another process's
// capture is searchable once the index has applied it (~10 ms here).
// Stores created with the strongly consistent index are moved to this one
// at start (graph/neo4j/schema.go, migrateSearchIndex).
CREATE FULLTEXT INDEX procedure_search IF NOT EXISTS
FOR (p:Procedure) ON EACH [p.search_text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'standard-no-stop-words', `fulltext.eventually_consistent`: true}};
