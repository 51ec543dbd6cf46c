// Dumped causes (Store.Load, also merging): a cause the store lacks is
// created with its dumped description; one it holds keeps its description
// unless it has none (as a capture sets it).
UNWIND $rows AS r
MERGE (c:Cause {name: r.name})
  ON CREATE SET c.created_at = $at, c.description = r.description
SET c.description = CASE WHEN c.description = '' THEN r.description ELSE c.description END;
