// Keeps p counted in its class (procedures.Class: status, opacity, number of
// tools, kept read-only and problem, retired, demoted): when the class of p differs from the
// one it is counted in (p.class_key), moves it from that ProcedureClass
// node to the right one, and its tools with it (fragments/class_tools).
// Find filters on p.class_key and sums the counts of the matching classes
// for its totals. A procedure not yet classified (read_only null) is in no
// class. Included after every statement that changes what the class is
// made of (capture.cypher, promote.cypher, classify_set.cypher,
// retire_set.cypher, merge_versions.cypher, use.cypher,
// use_health.cypher); rows pass through unchanged.
CALL {
  WITH p
  WITH p,
#include class_key
    AS key
  WHERE p.read_only IS NOT NULL AND (p.class_key IS NULL OR p.class_key <> key)
  OPTIONAL MATCH (old:ProcedureClass {key: p.class_key})
  FOREACH (o IN CASE WHEN old IS NULL THEN [] ELSE [old] END | SET o.count = o.count - 1)
  MERGE (k:ProcedureClass {key: key})
#include class_create
  SET k.count = k.count + 1, p.class_key = key
}
CALL {
  WITH p
  WITH p WHERE p.class_key IS NOT NULL AND (p.tools_key IS NULL OR p.tools_key <> p.class_key)
  WITH collect(p) AS ps
#include class_tools
}
