// Keeps $recording (a procedures.Recording as recordingParams passes it:
// id, recorded_at, content_hash, bytes, body, keep; or null, which keeps
// nothing) as a recording of p's version v: it replaces the recording of
// the same id unless its content is the same, then v keeps its keep newest
// (recorded_at, then id). A unit subquery: rows pass through unchanged.
// use.cypher and use_health.cypher name it, with p and v bound.
CALL {
  WITH p, v
  WITH p, v WHERE $recording IS NOT NULL
  MERGE (r:Recording {id: $recording.id})
    ON CREATE SET r.procedure = p.name, r.code_hash = v.code_hash
  WITH p, v, r, coalesce(r.content_hash = $recording.content_hash, false) AS same
  WHERE NOT same
  SET r.recorded_at = $recording.recorded_at, r.content_hash = $recording.content_hash,
      r.bytes = $recording.bytes, r.body = $recording.body
  WITH p.name AS procedure, v.code_hash AS code_hash, $recording.keep AS keep
#include recordings_keep
}
