// Takes the catalogue's write lock for the rest of the transaction, before
// catalogue_clear reads which tools are listed: two concurrent puts then
// run one after the other, so a tool that neither lists stays unlisted.
// The lock is the Catalogue node and its $stripes CatalogueStripe nodes,
// in order: a new procedure classified from the catalogue the store holds
// takes one stripe only (capture.cypher), so it waits for this lock, and
// this lock for it, but new procedures do not wait for each other.
MERGE (c:Catalogue {id: 'current'})
SET c.locked_at = $at
WITH c
UNWIND range(0, $stripes - 1) AS i
MERGE (s:CatalogueStripe {id: i})
SET s.locked_at = $at;
