// The procedures among $rows (name, signature) stored under another
// signature (Store.MergeConflict): a merge of them is refused.
UNWIND $rows AS r
MATCH (p:Procedure {name: r.name})
WHERE p.signature <> r.signature
RETURN p.name AS name;
