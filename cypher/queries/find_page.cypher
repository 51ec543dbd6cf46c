// One page of Find: the filters (the same as find_count.cypher) apply before
// SKIP and LIMIT; order is frequency desc, last_used_at desc with never-used
// last, name asc: the order of p.rank, read from its range index, so the
// scan stops once the page is full. Null parameters and empty lists match
// everything.
// Read-only means every signature name is a key of $readOnlySet (the
// read-only names as a map: a hash lookup per name); exposure is
// procedures.IsExposed on the current version's mirrored status and opacity.
MATCH (p:Procedure)
WHERE p.rank >= ''
  AND ($status IS NULL OR p.status = $status)
  AND size(p.signature) >= $minTools
  AND all(t IN $tools WHERE t IN p.signature)
  AND (size($causes) = 0 OR EXISTS { MATCH (c:Cause)-[:INVESTIGATED_BY]->(p) WHERE c.name IN $causes })
WITH p, CASE WHEN $readOnly IS NULL AND $exposed IS NULL THEN null
             ELSE all(n IN p.signature WHERE $readOnlySet[n] IS NOT NULL) END AS readOnly
WHERE ($readOnly IS NULL OR readOnly = $readOnly)
  AND ($exposed IS NULL OR $exposed = (p.status = 'succeeded' AND NOT p.opaque AND size(p.signature) >= 2 AND (readOnly OR $allowMutating)))
WITH p
ORDER BY p.rank
SKIP $offset
LIMIT $limit
RETURN p {
  .name, .signature, .summary, .frequency, .use_count,
  .created_at, .updated_at, .last_used_at,
  .grant_enabled, .grant_by, .grant_at, .grant_reason, .grant_code_hash,
  version: head([(p)-[:CURRENT]->(v:ProcedureVersion) |
    v {.code_hash, .code, .dialect, .parameters, .input_schema, .status, .opaque, .warnings}]),
  causes: [(c:Cause)-[e:INVESTIGATED_BY]->(p) | {name: c.name, frequency: e.frequency}]
} AS procedure;
