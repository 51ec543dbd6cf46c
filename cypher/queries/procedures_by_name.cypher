// The procedures named in $names that exist, each with its current version,
// causes and grant (the procedure fragment).
UNWIND $names AS name
MATCH (p:Procedure {name: name})
RETURN
#include procedure
AS procedure;
