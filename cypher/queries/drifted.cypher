// The stale versions (Store.Drifted): those whose baseline has a contract
// key that is not among the catalogue's ($keys, procedures.Catalogue.
// ContractKeys), current ones first, then by procedure and code hash; the
// page [$offset, $offset + $limit) of them ($limit null: to the end), with
// their baselines and last verifications, and how many there are.
// Versions without a baseline are not stale. The count and the page are
// two passes over the versions: the page is a top-k sort (ORDER BY with a
// LIMIT), so neither holds every stale version at once.
MATCH (:Procedure)-[:HAS_VERSION]->(v:ProcedureVersion)
WHERE v.baseline_keys IS NOT NULL AND any(k IN v.baseline_keys WHERE NOT k IN $keys)
WITH count(v) AS total
CALL {
  MATCH (p:Procedure)-[:HAS_VERSION]->(v:ProcedureVersion)
  WHERE v.baseline_keys IS NOT NULL AND any(k IN v.baseline_keys WHERE NOT k IN $keys)
  WITH v, p.code_hash = v.code_hash AS current
  ORDER BY current DESC, v.procedure, v.code_hash
  SKIP $offset LIMIT coalesce($limit, 2147483647)
  RETURN collect([v.procedure, v.code_hash, current, v.baseline, v.captured_at, v.verification]) AS page
}
RETURN total, page;
