// Takes the write lock on a procedure for the rest of the transaction (a
// write that changes nothing) and returns its current code hash and the
// status of its version $hash (null when there is none). No row when the
// procedure does not exist.
MATCH (p:Procedure {name: $name})
SET p.updated_at = p.updated_at
WITH p
OPTIONAL MATCH (p)-[:HAS_VERSION]->(v:ProcedureVersion {code_hash: $hash})
RETURN p.code_hash AS current, v.status AS status;
