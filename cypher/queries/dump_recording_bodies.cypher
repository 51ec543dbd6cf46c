// The recordings $ids as a dump carries them (Store.Dump with
// recordings), in the order of $ids; one deleted since
// dump_recordings.cypher listed it has no row.
UNWIND range(0, size($ids) - 1) AS i
MATCH (r:Recording {id: $ids[i]})
RETURN r.id AS id, r.recorded_at AS recorded_at, r.content_hash AS content_hash, r.body AS body
ORDER BY i;
