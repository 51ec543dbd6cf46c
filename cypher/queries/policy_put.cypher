// Stores a session's policy for one code hash.
MERGE (p:SessionPolicy {id: $id})
SET p.session = $session, p.code_hash = $codeHash, p.record = $record;
