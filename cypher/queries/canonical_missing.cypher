// Up to $batch versions stored without a canonical hash (before versions
// were keyed by it, or loaded from a dump, which does not carry it), with
// their code: Store.Open computes each one's hash in Go
// (procedures.CanonicalHashOf) and sets it (canonical_set.cypher). A code
// that no longer analyses is marked canonical_none and skipped after.
MATCH (v:ProcedureVersion)
WHERE v.canonical_hash IS NULL AND v.canonical_none IS NULL
RETURN v.id AS id, v.code AS code, v.dialect AS dialect
LIMIT $batch;
