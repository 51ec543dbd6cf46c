// Dumped recordings (Store.Load, into an empty store and merging alike;
// docs/dumps.md "Merging"): one the store lacks (by id) is added to its
// version, one it holds is kept as it is; then each version the batch
// added to keeps its r.keep newest (fragments/recordings_keep.cypher). A row whose version is not stored
// adds nothing and is counted in missing (Store.Load refuses the batch).
UNWIND $rows AS r
OPTIONAL MATCH (:Procedure {name: r.procedure})-[:HAS_VERSION]->(v:ProcedureVersion {code_hash: r.code_hash})
WITH r, v
ORDER BY r.procedure, r.code_hash, r.id
WITH collect(CASE WHEN v IS NULL THEN r.id END) AS missing, collect(CASE WHEN v IS NOT NULL THEN r END) AS rows
CALL {
  WITH rows
  UNWIND rows AS r
  MERGE (rec:Recording {id: r.id})
    ON CREATE SET rec.procedure = r.procedure, rec.code_hash = r.code_hash, rec.recorded_at = r.recorded_at,
      rec.content_hash = r.content_hash, rec.bytes = r.bytes, rec.body = r.body
  WITH DISTINCT r.procedure AS procedure, r.code_hash AS code_hash, r.keep AS keep
  CALL {
    WITH procedure, code_hash, keep
#include recordings_keep
  }
}
RETURN missing;
