// Moves the store's authorization revision (Store.AuthRevision) when bump
// holds: the single AuthRevision node (id "current"), created at the first
// move. Included by the statements that can change what a grant or a
// session policy decides (grant.cypher, promote.cypher, capture.cypher, and
// fragments/demotion.cypher for use.cypher, use_health.cypher, run_use.cypher
// and run_use_health.cypher); queries/auth_bump.cypher is the statement a
// write of several statements runs in its transaction. Rows pass through
// unchanged.
FOREACH (_ IN CASE WHEN bump THEN [1] ELSE [] END |
  MERGE (ar:AuthRevision {id: 'current'})
  SET ar.revision = coalesce(ar.revision, 0) + 1
)
