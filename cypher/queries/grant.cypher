// Sets ($grant, a map) or removes ($grant null) a procedure's durable
// auto-run grant and appends its decision (Store.SetGrant, alone in its
// transaction, which commits whatever this returns), only while the
// procedure's current code hash is still $expectHash and the decision's id
// is free or holds this decision. The first write (a no-op SET) takes the
// procedure's write lock, so the check and the change are atomic with
// respect to captures and promotions. $catalogue (null checks nothing) is
// the catalogue the change was prepared under, as the revisions the
// catalogue node reads as when it is that one (Store.SetGrant): unless it
// is the stored one, sameCatalogue is false and nothing is written (one
// seek of the unique Catalogue node: a grant prepared from what the
// service knew, not read first, is checked here; ADR 0047). Returns
// sameCatalogue, ok (the catalogue and the hash matched),
// created and same of the decision append (null when not ok) and the
// procedure as it now is; no row when the procedure does not exist. A
// write moves the authorization revision (fragments/auth_bump).
MATCH (p:Procedure {name: $name})
SET p.updated_at = p.updated_at
WITH p
CALL {
  OPTIONAL MATCH (cur:Catalogue {id: 'current'})
  RETURN $catalogue IS NULL OR coalesce(cur.revision, '') IN $catalogue AS sameCatalogue
}
WITH p, sameCatalogue, sameCatalogue AND p.code_hash = $expectHash AS ok
OPTIONAL CALL {
  WITH ok
  WITH ok WHERE ok
#include decision_append
}
WITH p, sameCatalogue, ok, created, same, ok AND (created OR same) AS write
WITH p, sameCatalogue, ok, created, same, write, write AS bump
#include auth_bump
FOREACH (_ IN CASE WHEN write AND $grant IS NOT NULL THEN [1] ELSE [] END |
  SET p.grant_enabled = $grant.enabled,
      p.grant_by = $grant.grantedBy,
      p.grant_at = $grant.grantedAt,
      p.grant_reason = $grant.reason,
      p.grant_code_hash = $expectHash,
      p.grant_binding = $grant.binding
)
FOREACH (_ IN CASE WHEN write AND $grant IS NULL THEN [1] ELSE [] END |
  REMOVE p.grant_enabled, p.grant_by, p.grant_at, p.grant_reason, p.grant_code_hash, p.grant_binding
)
RETURN sameCatalogue, ok, created, same,
#include procedure
AS procedure;
