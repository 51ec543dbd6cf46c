// The store's authorization revision (Store.AuthRevision): 0 before the
// first write that moves it.
OPTIONAL MATCH (ar:AuthRevision {id: 'current'})
RETURN coalesce(ar.revision, 0) AS revision;
