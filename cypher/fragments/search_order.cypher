// search.Compare's order of ranked search hits p (ranked: search_score):
// the score, then Find's order (findorder.Compare: frequency, last_used_at
// with never used last, name). The conformance suite's SearchRanking
// checks a page against Go's order on both stores.
ORDER BY ranked DESC, p.frequency DESC, p.last_used_at IS NULL, p.last_used_at DESC, p.name
