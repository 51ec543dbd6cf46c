// Turns, newest first (ids are time-ordered), filtered by status and
// session, from just before $before.
MATCH (t:Turn)
WHERE ($status IS NULL OR t.status = $status)
  AND ($session IS NULL OR t.session = $session)
  AND ($before IS NULL OR t.id < $before)
RETURN t.record AS record
ORDER BY t.id DESC
LIMIT $limit;
