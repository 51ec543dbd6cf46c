// The version code_hash of procedure keeps its keep newest recordings
// (recorded_at, then id), the others deleted: the one retention rule of
// recordings on Neo4j (the embedded store's keepNewest). Named, with
// procedure, code_hash and keep bound, by recording_put.cypher and
// load_recordings.cypher inside their unit subqueries.
MATCH (o:Recording {procedure: procedure, code_hash: code_hash})
WITH keep, o ORDER BY o.recorded_at DESC, o.id DESC
WITH keep, collect(o) AS kept
FOREACH (x IN kept[keep..] | DELETE x)
