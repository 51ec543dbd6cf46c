// Waits (up to $seconds) until every index is online: run after the schema.
CALL db.awaitIndexes($seconds);
