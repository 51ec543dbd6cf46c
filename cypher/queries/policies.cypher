// A session's policies whose code hash starts with $prefix, by code hash.
MATCH (p:SessionPolicy {session: $session})
WHERE p.code_hash STARTS WITH $prefix
RETURN p.id AS id, p.record AS record
ORDER BY p.code_hash;
