// Test only: empties the database, in batches (run in an auto-commit transaction).
MATCH (n)
CALL { WITH n DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS;
