// Removes the import marker (Store.FinishLoad).
MATCH (m:ImportMarker {id: 'current'})
DELETE m;
