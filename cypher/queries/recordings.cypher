// The page [$offset, $offset + $limit) ($limit null: to the end) of the
// recordings of the version $hash of the procedure $name (of all its
// versions when $hash is null), newest first (Store.Recordings), how many
// there are, and whether the procedure exists (no recording rows when it
// has none). Both forms seek the recording_version index; only the page's
// bodies are read.
OPTIONAL MATCH (p:Procedure {name: $name})
CALL {
  OPTIONAL MATCH (r:Recording)
  WHERE r.procedure = $name AND (($hash IS NULL AND r.code_hash IS NOT NULL) OR r.code_hash = $hash)
  RETURN count(r) AS total
}
CALL {
  OPTIONAL MATCH (r:Recording)
  WHERE r.procedure = $name AND (($hash IS NULL AND r.code_hash IS NOT NULL) OR r.code_hash = $hash)
  WITH r ORDER BY r.recorded_at DESC, r.id DESC
  SKIP $offset LIMIT coalesce($limit, 2147483647)
  RETURN collect(r {.id, .code_hash, .recorded_at, .body}) AS recordings
}
RETURN p IS NOT NULL AS exists, total, recordings;
