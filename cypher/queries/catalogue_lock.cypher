// Takes the catalogue's write lock for the rest of the transaction, before
// catalogue_clear reads which tools are listed: two concurrent puts then
// run one after the other, so a tool that neither lists stays unlisted.
MERGE (c:Catalogue {id: 'current'})
SET c.locked_at = $at;
