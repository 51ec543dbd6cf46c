// The record of $holder, and the holder of the record whose hash is
// $sha256 (either null).
OPTIONAL MATCH (t:Token {holder: $holder})
OPTIONAL MATCH (h:Token {sha256: $sha256})
RETURN t {.*} AS token, h.holder AS hash_holder;
