// Sets the canonical hash of versions (canonical_missing.cypher's rows,
// $rows: {id, canonical}; a null canonical marks canonical_none).
UNWIND $rows AS r
MATCH (v:ProcedureVersion {id: r.id})
SET v.canonical_hash = r.canonical,
    v.canonical_none = CASE WHEN r.canonical IS NULL THEN true ELSE null END;
