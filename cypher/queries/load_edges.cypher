// Dumped cause edges with their frequencies (Store.Load into an empty
// store, each applied once: created).
UNWIND $rows AS r
MATCH (c:Cause {name: r.cause}), (p:Procedure {name: r.procedure})
CREATE (c)-[e:INVESTIGATED_BY]->(p)
SET e.frequency = r.frequency
RETURN count(e) AS loaded;
