// Every procedure with a stored grant (Store.Granted, which keeps those
// whose grant is Held), by name, through the procedure_grant index.
MATCH (p:Procedure)
WHERE p.grant_enabled IS NOT NULL
WITH p
ORDER BY p.name
RETURN
#include procedure
AS procedure;
