// Dumped session policies (Store.Load, also merging), as policy_put.cypher
// stores them: a policy the store holds is kept (loading into an empty
// store, only a resumed batch finds one: the same record).
UNWIND $rows AS r
MERGE (p:SessionPolicy {id: r.id})
  ON CREATE SET p.session = r.session, p.code_hash = r.codeHash, p.record = r.record
RETURN count(p) AS loaded;
