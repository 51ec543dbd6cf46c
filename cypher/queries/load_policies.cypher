// Dumped session policies (Store.Load), as policy_put.cypher stores them.
UNWIND $rows AS r
MERGE (p:SessionPolicy {id: r.id})
SET p.session = r.session, p.code_hash = r.codeHash, p.record = r.record
RETURN count(p) AS loaded;
