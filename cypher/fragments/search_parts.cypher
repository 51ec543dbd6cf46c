// Adds the search parts of the bound list add (distinct,
// procedures.SearchParts) that p lacks to p.search_parts, at most $max in
// all, and sets p.search_text (search.Document: one part a line),
// which the procedure_search full-text index reads. Nothing is written when
// nothing is new; rows pass through unchanged. capture.cypher binds add to
// the capture's $parts, merge_procedures.cypher to a dumped procedure's.
CALL {
  WITH p, add
  WITH p, add, coalesce(p.search_parts, []) AS old
  WITH p, old, [x IN add WHERE NOT x IN old] AS new
  WHERE size(new) > 0 AND size(old) < $max
  WITH p, (old + new)[0..$max] AS parts
  SET p.search_parts = parts,
      p.search_text = reduce(s = head(parts), x IN tail(parts) | s + '\n' + x)
}
