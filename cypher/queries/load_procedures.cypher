// Dumped procedures (Store.Load into an empty store), with the values
// dumped: counts, times, grant, retirement and demotion, search parts and the search
// text (search.Document of them, null without parts) that the
// procedure_search full-text index reads. code_hash names the current
// version, which load_versions.cypher links; the kept classification is
// left unset (Store.FinishLoad classifies every procedure). Each record is
// applied once (the import marker commits with its batch), so nodes and
// relationships are created, not merged; the tools exist
// (load_tools.cypher).
UNWIND $rows AS r
CREATE (p:Procedure {name: r.name})
SET p.signature = r.signature, p.summary = r.summary, p.frequency = r.frequency, p.use_count = r.use_count,
    p.created_at = r.created_at, p.updated_at = r.updated_at, p.last_used_at = r.last_used_at,
    p.grant_enabled = r.grant_enabled, p.grant_by = r.grant_by, p.grant_at = r.grant_at,
    p.grant_reason = r.grant_reason, p.grant_code_hash = r.grant_code_hash, p.grant_binding = r.grant_binding,
    p.retired_at = r.retired_at, p.retired_by = r.retired_by, p.retired_reason = r.retired_reason,
    p.demoted = r.demoted, p.code_hash = r.current, p.search_parts = r.search_parts, p.search_text = r.search_text
WITH p, r
#include rank_set
WITH p, r
CALL {
  WITH p, r
  UNWIND r.signature AS toolName
  MATCH (t:Tool {name: toolName})
  CREATE (p)-[:CALLS]->(t)
}
RETURN count(*) AS loaded;
