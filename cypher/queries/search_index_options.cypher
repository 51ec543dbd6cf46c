// Whether the procedure_search full-text index exists and is eventually
// consistent (migrateSearchIndex: one row when it exists, none otherwise).
SHOW FULLTEXT INDEXES YIELD name, options
WHERE name = 'procedure_search'
RETURN coalesce(options.indexConfig['fulltext.eventually_consistent'], false) AS eventuallyConsistent;
