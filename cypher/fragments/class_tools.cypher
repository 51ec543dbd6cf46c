// Keeps the tools of the procedures in the list ps counted in their class:
// a ToolClass node {tool, key, count} holds the number of procedures of the
// class key that call the tool (find_filtered.cypher sums them for the total
// of a one-tool filter with summary filters). p.tools_key is the class key
// p's tools are counted under (null: not counted); this moves the counts of
// every p whose tools_key is not its class_key to class_key, one count
// update per (tool, old key, new key) rather than per procedure, and counts
// each tool of a signature once. Included after every change of class_key
// (class_sync, classify_load.cypher) and by tools_backfill.cypher (a
// database written before the counts were kept); ps and the rows pass
// through unchanged.
CALL {
  WITH ps
  UNWIND ps AS p
  WITH p, p.tools_key AS old
  WHERE p.class_key IS NOT NULL AND (old IS NULL OR old <> p.class_key)
  SET p.tools_key = p.class_key
  WITH p, old
  UNWIND p.signature AS tool
  WITH DISTINCT p, old, tool
  WITH tool, old, p.tools_key AS key, count(*) AS n
  CALL {
    WITH tool, old, n
    MATCH (o:ToolClass {tool: tool, key: old})
    SET o.count = o.count - n
  }
  MERGE (k:ToolClass {tool: tool, key: key})
    ON CREATE SET k.count = 0
  SET k.count = k.count + n
}
