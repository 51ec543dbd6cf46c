// Benchmark only, before cleanup.cypher: takes the namespace's procedures
// out of the class counts (fragments/class_sync.cypher) and the per-tool
// class counts (fragments/class_tools.cypher) that Find's totals read (in
// shard 0: the sums are what counts), so the database's other procedures
// keep exact totals.
MATCH (p:Procedure) WHERE p.name STARTS WITH $proc AND p.class_key IS NOT NULL
WITH collect(p) AS ps
CALL {
  WITH ps
  UNWIND ps AS p
  WITH p.class_key AS key, count(*) AS n
  MERGE (k:ClassShard {key: key, shard: 0})
    ON CREATE SET k.count = 0
  SET k.count = k.count - n
}
CALL {
  WITH ps
  UNWIND ps AS p
  WITH p WHERE p.tools_key IS NOT NULL
  UNWIND p.signature AS tool
  WITH DISTINCT p, tool
  WITH tool, p.tools_key AS key, count(*) AS n
  MERGE (k:ToolClassShard {tool: tool, key: key, shard: 0})
    ON CREATE SET k.count = 0
  SET k.count = k.count - n
}
RETURN size(ps) AS uncounted;
