// Writes a token record as $props holds it (every property: one left
// null is removed).
MERGE (t:Token {holder: $holder})
SET t = $props
RETURN t {.*} AS token;
