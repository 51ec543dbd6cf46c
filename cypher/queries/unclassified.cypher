// Up to $batch procedures without a kept classification (a database
// written before it was kept, or a bulk load): Store.Open classifies them.
MATCH (p:Procedure)
WHERE p.read_only IS NULL
RETURN p.name AS name
LIMIT $batch;
