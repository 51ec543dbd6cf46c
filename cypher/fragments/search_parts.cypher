// Adds the search parts $parts (distinct, procedures.SearchParts) that p
// lacks to p.search_parts, at most $max in all, and sets p.search_text
// (procedures.SearchDocument: one part a line), which the procedure_search
// full-text index reads. Nothing is written when nothing is new; rows pass
// through unchanged (capture.cypher, in the capture's statement).
CALL {
  WITH p
  WITH p, coalesce(p.search_parts, []) AS old
  WITH p, old, [x IN $parts WHERE NOT x IN old] AS new
  WHERE size(new) > 0 AND size(old) < $max
  WITH p, (old + new)[0..$max] AS parts
  SET p.search_parts = parts,
      p.search_text = reduce(s = head(parts), x IN tail(parts) | s + '\n' + x)
}
