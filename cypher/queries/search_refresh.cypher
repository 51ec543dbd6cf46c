// Waits until the eventually consistent full-text indexes (procedure_search)
// have applied every transaction committed before this call (Store.awaitSearch).
CALL db.index.fulltext.awaitEventuallyConsistentIndexRefresh();
