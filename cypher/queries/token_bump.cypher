// Takes the token lock and bumps the store's token revision: the first
// statement of every change of a token, so that changes are serialised
// and each has its own revision.
MERGE (r:TokenRevision {id: 'current'})
ON CREATE SET r.revision = 0
SET r.revision = r.revision + 1
RETURN r.revision AS revision;
