// Counts the tools of up to $batch procedures in their class (fragments/
// class_tools) where they are not counted there: a database written before
// the tool counts were kept (tools_key null), or by a version that moved
// classes without them. Returns how many it moved: Store.Open runs it after
// the classes are backfilled until it returns fewer than $batch, each batch
// in its own transaction. Idempotent; on an up-to-date database it reads
// the procedures once.
MATCH (p:Procedure)
WHERE p.class_key IS NOT NULL AND (p.tools_key IS NULL OR p.tools_key <> p.class_key)
WITH p
LIMIT $batch
WITH collect(p) AS ps
#include class_tools
RETURN size(ps) AS updated;
