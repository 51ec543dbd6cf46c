// Moves the import marker to $line (Store.Load), in the batch's
// transaction: the MERGE locks it, so two imports serialise. No row when
// the marker is another dump's or the same dump's in the other mode
// ($merge): nothing is written then and the caller refuses the batch.
// done: the marker is at $line or after it, so the batch was applied (it
// commits with the marker) and is not applied again.
MERGE (m:ImportMarker {id: 'current'})
  ON CREATE SET m.dump_id = $dumpId, m.merge = $merge, m.line = 0
WITH m
WHERE m.dump_id = $dumpId AND coalesce(m.merge, false) = $merge
WITH m, coalesce(m.line, 0) >= $line AS done
SET m.line = CASE WHEN done THEN m.line ELSE $line END
RETURN done;
