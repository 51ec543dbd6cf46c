// Keeps the classifications procedures.Reclassify computed ($rows of name,
// read_only, problem, sorted by name) on loaded procedures that have none
// yet (Store.FinishLoad after an import) and counts them in their classes,
// and their tools (fragments/class_tools), one count update per class rather
// than per procedure (class_sync does it per procedure), in shard 0
// (fragments/class_count: a loaded procedure has no p.shard). A procedure
// classified already (a finish done again after a crash) is left alone:
// nothing is counted twice.
UNWIND $rows AS row
MATCH (p:Procedure {name: row.name})
WHERE p.class_key IS NULL
SET p.read_only = row.read_only, p.problem = row.problem
WITH p,
#include class_key
  AS key
SET p.class_key = key
WITH key, collect(p) AS ps
CALL {
  WITH key, ps
  WITH key, size(ps) AS n, ps[0] AS p
  MERGE (k:ProcedureClass {key: key})
#include class_create
  MERGE (s:ClassShard {key: key, shard: 0})
    ON CREATE SET s.count = 0
  SET s.count = s.count + n
}
#include class_tools
RETURN sum(size(ps)) AS classified;
