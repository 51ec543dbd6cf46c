// Dumped usage keys (Store.Load into an empty store, each applied once:
// created), under the ids capture.cypher gives them.
UNWIND $rows AS r
CREATE (u:UsageKey {id: CASE r.scope
  WHEN 'procedure' THEN 'p:' + toString(size(r.procedure)) + ':' + r.procedure + ':' + r.key
  WHEN 'version' THEN 'v:' + toString(size(r.procedure + '|' + r.code_hash)) + ':' + r.procedure + '|' + r.code_hash + ':' + r.key
  ELSE 'c:' + toString(size(r.cause)) + ':' + r.cause + ':' + toString(size(r.procedure)) + ':' + r.procedure + ':' + r.key
END})
SET u.scope = r.scope, u.key = r.key, u.procedure = r.procedure, u.code_hash = r.code_hash, u.cause = r.cause
RETURN count(u) AS loaded;
