// Keeps the classifications procedures.Reclassify computed ($rows of name,
// read_only, problem, sorted by name) on the procedures whose kept one
// differs, and moves them to their class.
UNWIND $rows AS row
MATCH (p:Procedure {name: row.name})
WHERE p.read_only IS NULL OR p.read_only <> row.read_only OR p.problem <> row.problem
SET p.read_only = row.read_only, p.problem = row.problem
WITH p
#include class_sync
RETURN count(p) AS changed;
