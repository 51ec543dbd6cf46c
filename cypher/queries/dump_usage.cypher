// The usage keys of $owners (rows of scope 'procedure', 'version' or
// 'cause' with procedure, code_hash, cause), each owner's keys found by
// the prefix of their ids (capture.cypher's form): a seek on the unique
// index, never a scan (Store.Dump).
UNWIND $owners AS o
WITH o, CASE o.scope
  WHEN 'procedure' THEN 'p:' + toString(size(o.procedure)) + ':' + o.procedure + ':'
  WHEN 'version' THEN 'v:' + toString(size(o.procedure + '|' + o.code_hash)) + ':' + o.procedure + '|' + o.code_hash + ':'
  ELSE 'c:' + toString(size(o.cause)) + ':' + o.cause + ':' + toString(size(o.procedure)) + ':' + o.procedure + ':'
END AS prefix
MATCH (u:UsageKey)
WHERE u.id STARTS WITH prefix
RETURN o.scope AS scope, o.procedure AS procedure, o.code_hash AS code_hash, o.cause AS cause, u.key AS key;
