// Keeps the tools of the procedures in the list ps counted in their class:
// ToolClassShard nodes {tool, key, shard, count} hold the number of
// procedures of the class key that call the tool, summed over the shards
// and the ToolClass node {tool, key, count} a version before the shards
// kept (find_filtered.cypher sums them for the total of a one-tool filter
// with summary filters). A procedure's tools are counted in its shard
// p.shard (as in class_sync), so that new procedures calling one tool,
// counted at once, do not all wait for one node's lock; a shard may go
// below zero (a procedure counted before the shards), the sum is exact.
// p.tools_key is the class key p's tools are counted under (null: not
// counted); this moves the counts of every p whose tools_key is not its
// class_key to class_key, one count update per (tool, old key, new key)
// (and shard) rather than per procedure, and counts each tool of a
// signature once.
// Included after every change of class_key (class_sync,
// classify_load.cypher) and by tools_backfill.cypher (a database written
// before the counts were kept); ps and the rows pass through unchanged.
CALL {
  WITH ps
  UNWIND ps AS p
  WITH p, p.tools_key AS old
  WHERE p.class_key IS NOT NULL AND (old IS NULL OR old <> p.class_key)
  SET p.tools_key = p.class_key
  WITH p, old
  UNWIND p.signature AS tool
  WITH DISTINCT p, old, tool
  WITH tool, old, p.tools_key AS key, coalesce(p.shard, 0) AS shard, count(*) AS n
  CALL {
    WITH tool, old, n, shard
    WITH tool, old, n, shard WHERE old IS NOT NULL
    MERGE (o:ToolClassShard {tool: tool, key: old, shard: shard})
      ON CREATE SET o.count = 0
    SET o.count = o.count - n
  }
  MERGE (k:ToolClassShard {tool: tool, key: key, shard: shard})
    ON CREATE SET k.count = 0
  SET k.count = k.count + n
}
