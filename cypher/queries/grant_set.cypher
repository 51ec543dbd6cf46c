// Stores a procedure's durable auto-run grant (Store.SetGrant, after
// lock_procedure).
MATCH (p:Procedure {name: $name})
SET p.grant_enabled = $enabled,
    p.grant_by = $grantedBy,
    p.grant_at = $grantedAt,
    p.grant_reason = $reason,
    p.grant_code_hash = $codeHash;
