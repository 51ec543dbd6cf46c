// The recordings of the procedures $names (Store.Dump with recordings):
// their names, ids and sizes, by procedure, code hash and id, seeking the
// recording_version index; dump_recording_bodies.cypher reads their
// bodies in batches.
UNWIND $names AS name
MATCH (r:Recording)
WHERE r.procedure = name AND r.code_hash IS NOT NULL
RETURN r.procedure AS procedure, r.code_hash AS code_hash, r.id AS id, r.bytes AS bytes
ORDER BY procedure, code_hash, id;
