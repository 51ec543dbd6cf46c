// Moves the import marker (Store.Load), in the batch's transaction: the
// MERGE locks it, so two imports serialise. No row when the marker is
// another dump's or the same dump's in the other mode ($merge): nothing is
// written then and the caller refuses the batch.
MERGE (m:ImportMarker {id: 'current'})
  ON CREATE SET m.dump_id = $dumpId, m.merge = $merge
WITH m
WHERE m.dump_id = $dumpId AND coalesce(m.merge, false) = $merge
SET m.line = $line
RETURN m.line AS line;
