// Sets the rank of up to $batch procedures that have none (a database
// written before rank existed) and returns how many it set: Store.Open runs
// it after the schema until it returns fewer than $batch, each batch in its
// own transaction. Idempotent; on an up-to-date database it reads the
// procedures once (about 0.1 s for 100k).
//
// p.rank is defined once, in fragments/rank_set.cypher.
MATCH (p:Procedure)
WHERE p.rank IS NULL
WITH p
LIMIT $batch
#include rank_set
RETURN count(p) AS updated;
