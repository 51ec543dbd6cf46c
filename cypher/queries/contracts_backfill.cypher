// Gives the catalogue's tools their contracts ($tools: name, contract,
// contract_key; see catalogue_put.cypher) where they have none: a
// database written before drift was kept. Store.Open runs it before
// baselines_backfill.cypher. Returns how many it set.
UNWIND $tools AS tool
MATCH (t:Tool {name: tool.name})
WHERE t.in_catalogue AND t.contract IS NULL
SET t.contract = tool.contract, t.contract_key = tool.contract_key
RETURN count(t) AS updated;
