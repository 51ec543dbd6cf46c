// The token records changed after revision $since (all for 0), revoked
// ones included, and the store's token revision (Store.TokensSince).
OPTIONAL MATCH (r:TokenRevision {id: 'current'})
WITH coalesce(r.revision, 0) AS revision
OPTIONAL MATCH (t:Token)
WHERE revision > $since AND t.revision > $since
RETURN revision, collect(t {.*}) AS tokens;
