// The recordings of the procedure $name, newest first (Store.Recordings),
// and whether the procedure exists (no recording rows when it has none).
OPTIONAL MATCH (p:Procedure {name: $name})
OPTIONAL MATCH (r:Recording {procedure: $name})
WITH p, r ORDER BY r.recorded_at DESC, r.id DESC
RETURN p IS NOT NULL AS exists, collect(r {.id, .code_hash, .recorded_at, .body}) AS recordings;
