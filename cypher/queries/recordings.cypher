// The recordings of the version $hash of the procedure $name (of all its
// versions when $hash is null), newest first (Store.Recordings), and
// whether the procedure exists (no recording rows when it has none). Both
// forms seek the recording_version index.
OPTIONAL MATCH (p:Procedure {name: $name})
OPTIONAL MATCH (r:Recording)
WHERE r.procedure = $name AND (($hash IS NULL AND r.code_hash IS NOT NULL) OR r.code_hash = $hash)
WITH p, r ORDER BY r.recorded_at DESC, r.id DESC
RETURN p IS NOT NULL AS exists, collect(r {.id, .code_hash, .recorded_at, .body}) AS recordings;
