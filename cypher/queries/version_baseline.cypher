// A version as Store.Rebaseline reads it, locking its procedure first (the
// write that follows must not race another): the signature, the version's
// baseline and whether it is current. No row when either is unknown; a
// null version when the procedure has no version $hash.
MATCH (p:Procedure {name: $name})
SET p._lock = true
REMOVE p._lock
WITH p
OPTIONAL MATCH (p)-[:HAS_VERSION]->(v:ProcedureVersion {code_hash: $hash})
RETURN p.signature AS signature, p.code_hash AS current, v IS NOT NULL AS found, v.baseline AS baseline;
