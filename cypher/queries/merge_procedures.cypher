// Dumped procedures merged into the store (Store.Load with merge, docs/dumps.md
// "Merging"). A procedure the store lacks is created as dumped but with
// frequency 0 (merge_usage.cypher counts its keys) and no classification
// (Store.FinishLoad classifies); one it holds keeps its current version,
// grant and retirement and takes the earlier created_at, the later
// updated_at and last_used_at, the larger use_count, the dumped summary
// when it has none, and the dumped search parts it lacks
// (fragments/search_parts.cypher). A procedure stored under another signature
// gives no row (the caller refuses the batch). The tools exist
// (load_tools.cypher).
UNWIND $rows AS r
MERGE (p:Procedure {name: r.name})
  ON CREATE SET p.signature = r.signature, p.summary = r.summary, p.frequency = 0, p.use_count = r.use_count,
    p.created_at = r.created_at, p.updated_at = r.updated_at, p.last_used_at = r.last_used_at,
    p.grant_enabled = r.grant_enabled, p.grant_by = r.grant_by, p.grant_at = r.grant_at,
    p.grant_reason = r.grant_reason, p.grant_code_hash = r.grant_code_hash, p.grant_binding = r.grant_binding,
    p.retired_at = r.retired_at, p.retired_by = r.retired_by, p.retired_reason = r.retired_reason,
    p.code_hash = r.current, p._new = true
WITH p, r, p._new IS NOT NULL AS created
REMOVE p._new
WITH p, r, created
WHERE p.signature = r.signature
SET p.created_at = CASE WHEN r.created_at < p.created_at THEN r.created_at ELSE p.created_at END,
    p.updated_at = CASE WHEN r.updated_at > p.updated_at THEN r.updated_at ELSE p.updated_at END,
    p.last_used_at = CASE WHEN p.last_used_at IS NULL OR r.last_used_at > p.last_used_at THEN r.last_used_at ELSE p.last_used_at END,
    p.use_count = CASE WHEN r.use_count > p.use_count THEN r.use_count ELSE p.use_count END,
    p.summary = CASE WHEN p.summary = '' THEN r.summary ELSE p.summary END
WITH p, r, created
CALL {
  WITH p, r, created
  UNWIND CASE WHEN created THEN r.signature ELSE [] END AS toolName
  MATCH (t:Tool {name: toolName})
  CREATE (p)-[:CALLS]->(t)
}
WITH p, r.search_parts AS add
#include search_parts
WITH p
#include rank_set
RETURN count(p) AS merged;
