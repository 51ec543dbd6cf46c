// The import in progress (Store.LoadState): no row when there is none.
MATCH (m:ImportMarker {id: 'current'})
RETURN m.dump_id AS dumpId, m.line AS line, coalesce(m.merge, false) AS merge;
