// Sets the last use of each token of $used ({sha256, at}), never back;
// changes no revision.
UNWIND $used AS u
MATCH (t:Token {sha256: u.sha256})
WHERE t.last_used_at IS NULL OR t.last_used_at < u.at
SET t.last_used_at = u.at;
