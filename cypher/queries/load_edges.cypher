// Dumped cause edges with their frequencies (Store.Load).
UNWIND $rows AS r
MATCH (c:Cause {name: r.cause}), (p:Procedure {name: r.procedure})
MERGE (c)-[e:INVESTIGATED_BY]->(p)
SET e.frequency = r.frequency
RETURN count(e) AS loaded;
