// Dumped cause edges merged into the store (Store.Load with merge): an edge
// the store lacks is created with frequency 0 (merge_usage.cypher counts
// its keys); one it holds is kept.
UNWIND $rows AS r
MATCH (c:Cause {name: r.cause}), (p:Procedure {name: r.procedure})
MERGE (c)-[e:INVESTIGATED_BY]->(p)
  ON CREATE SET e.frequency = 0
RETURN count(e) AS merged;
