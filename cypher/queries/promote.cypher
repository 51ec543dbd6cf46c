// Makes the version $hash current (Store.Promote, after lock_procedure).
MATCH (p:Procedure {name: $name})-[:HAS_VERSION]->(v:ProcedureVersion {code_hash: $hash})
OPTIONAL MATCH (p)-[cur:CURRENT]->(:ProcedureVersion)
WITH p, v, collect(cur) AS curs
FOREACH (r IN curs | DELETE r)
CREATE (p)-[:CURRENT]->(v)
SET p.code_hash = v.code_hash, p.status = v.status, p.opaque = v.opaque
WITH p
#include class_sync
RETURN p.name AS name;
