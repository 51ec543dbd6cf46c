// Drops the procedure_search full-text index, so that the schema creates it
// again with its current options (migrateSearchIndex).
DROP INDEX procedure_search IF EXISTS;
