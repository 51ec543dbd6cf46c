// The procedures whose stored grant is enabled (Store.Granted, which keeps
// those whose grant is Held), by name, through the procedure_grant index:
// revoked grants are not read.
MATCH (p:Procedure)
WHERE p.grant_enabled = true
WITH p
ORDER BY p.name
RETURN
#include procedure
AS procedure;
