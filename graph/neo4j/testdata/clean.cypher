// Test only: empties procgraph's part of the database, in batches (run in an
// auto-commit transaction). Other packages' test nodes (e.g. the
// testcontainers probe) are left alone: go test runs packages in parallel
// against the one shared database.
MATCH (n)
WHERE n:Procedure OR n:ProcedureVersion OR n:Cause OR n:Tool OR n:UsageKey OR n:Decision OR n:Catalogue OR n:ProcedureClass OR n:ToolClass OR n:ClassShard OR n:ToolClassShard OR n:CatalogueStripe OR n:ImportMarker OR n:Turn OR n:TurnGate OR n:SessionPolicy OR n:Recording OR n:Token OR n:TokenRevision OR n:AuthRevision
CALL { WITH n DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS;
