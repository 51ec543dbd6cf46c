// Removes a procedure's grant (Store.SetGrant with nil, after lock_procedure).
MATCH (p:Procedure {name: $name})
REMOVE p.grant_enabled, p.grant_by, p.grant_at, p.grant_reason, p.grant_code_hash;
