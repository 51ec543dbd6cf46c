// Dumped usage keys merged into the store (Store.Load with merge), under
// the ids capture.cypher gives them: a key the store lacks is created and
// counted once on its procedure, version or edge (as capture.cypher
// counts: only the statement that created the node counts it); a key it
// holds counts nothing. Counts are added per owner.
UNWIND $rows AS r
WITH r, CASE r.scope
  WHEN 'procedure' THEN 'p:' + toString(size(r.procedure)) + ':' + r.procedure + ':' + r.key
  WHEN 'version' THEN 'v:' + toString(size(r.procedure + '|' + r.code_hash)) + ':' + r.procedure + '|' + r.code_hash + ':' + r.key
  ELSE 'c:' + toString(size(r.cause)) + ':' + r.cause + ':' + toString(size(r.procedure)) + ':' + r.procedure + ':' + r.key
END AS id
MERGE (u:UsageKey {id: id})
  ON CREATE SET u.scope = r.scope, u.key = r.key, u.procedure = r.procedure, u.code_hash = r.code_hash,
    u.cause = r.cause, u._new = true
WITH r, u, u._new IS NOT NULL AS isNew
REMOVE u._new
WITH r WHERE isNew
WITH r.scope AS scope, r.procedure AS procedure, r.code_hash AS code_hash, r.cause AS cause, count(*) AS n
CALL {
  WITH scope, procedure, n
  MATCH (p:Procedure {name: procedure})
  WHERE scope = 'procedure'
  SET p.frequency = p.frequency + n
  WITH p
#include rank_set
  RETURN count(*) AS procedures
}
CALL {
  WITH scope, procedure, code_hash, n
  MATCH (v:ProcedureVersion {id: procedure + '|' + code_hash})
  WHERE scope = 'version'
  SET v.frequency = v.frequency + n
  RETURN count(*) AS versions
}
CALL {
  WITH scope, procedure, cause, n
  MATCH (:Cause {name: cause})-[e:INVESTIGATED_BY]->(:Procedure {name: procedure})
  WHERE scope = 'cause'
  SET e.frequency = e.frequency + n
  RETURN count(*) AS edges
}
RETURN sum(procedures + versions + edges) AS counted;
