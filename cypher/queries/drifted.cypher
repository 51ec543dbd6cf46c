// The stale versions (Store.Drifted): those whose baseline has a contract
// key that is not among the catalogue's ($keys, procedures.Catalogue.
// ContractKeys), current ones first, then by procedure and code hash; the
// page [$offset, $offset + $limit) of them ($limit null: to the end), with
// their baselines and last verifications, and how many there are. Versions without a baseline
// are not stale.
MATCH (v:ProcedureVersion)
WHERE v.baseline_keys IS NOT NULL AND any(k IN v.baseline_keys WHERE NOT k IN $keys)
OPTIONAL MATCH (p:Procedure {name: v.procedure})
WITH v, coalesce(p.code_hash = v.code_hash, false) AS current
ORDER BY current DESC, v.procedure, v.code_hash
WITH collect([v, current]) AS stale
RETURN size(stale) AS total,
       [s IN CASE WHEN $limit IS NULL THEN stale[$offset..] ELSE stale[$offset..$offset + $limit] END |
         [s[0].procedure, s[0].code_hash, s[1], s[0].baseline, s[0].captured_at, s[0].verification]] AS page;
