// Moves the import marker (Store.Load), in the batch's transaction; the
// first write locks it, so two imports serialise and the second sees the
// first's dump id.
MERGE (m:ImportMarker {id: 'current'})
SET m.dump_id = $dumpId, m.line = $line;
