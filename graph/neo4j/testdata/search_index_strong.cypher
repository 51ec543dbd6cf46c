// Test only: the procedure_search index as it was created before it became
// eventually consistent (TestSearchIndexMigrates).
CREATE FULLTEXT INDEX procedure_search IF NOT EXISTS
FOR (p:Procedure) ON EACH [p.search_text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'standard-no-stop-words', `fulltext.eventually_consistent`: false}};
