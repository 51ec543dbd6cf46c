// Dumped causes (Store.Load): each set to its dumped description.
UNWIND $rows AS r
MERGE (c:Cause {name: r.name})
  ON CREATE SET c.created_at = $at
SET c.description = r.description;
