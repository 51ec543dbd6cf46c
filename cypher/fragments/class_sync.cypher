// Keeps p counted in its class (procedures.Class: status, opacity, number of
// tools, kept read-only and problem, retired, demoted): when the class of p differs from the
// one it is counted in (p.class_key), moves it from that ProcedureClass
// node to the right one, and its tools with it (fragments/class_tools).
// Find filters on p.class_key and sums the counts of the matching classes
// for its totals. The count of a class is sharded (fragments/class_count):
// a move updates the ClassShard {key, shard} nodes of the two classes in
// p.shard (capture.cypher: a new procedure's catalogue stripe, from its
// name; 0 for a procedure made otherwise), so that new procedures counted
// in one class at once do not all wait for one node's lock; a shard may go
// below zero (a procedure counted before the shards), the sum is exact. A
// procedure not yet classified (read_only null) is in no
// class. Included after every statement that changes what the class is
// made of (capture.cypher, promote.cypher, classify_set.cypher,
// retire_set.cypher, demotion_lift.cypher, merge_versions.cypher, use.cypher,
// use_health.cypher); rows pass through unchanged.
CALL {
  WITH p
  WITH p,
#include class_key
    AS key
  WHERE p.read_only IS NOT NULL AND (p.class_key IS NULL OR p.class_key <> key)
  // The class's node, with its parts: written only when it is created.
  MERGE (k:ProcedureClass {key: key})
#include class_create
  WITH p, key, coalesce(p.shard, 0) AS shard
  CALL {
    WITH p, shard
    WITH p, shard WHERE p.class_key IS NOT NULL
    MERGE (o:ClassShard {key: p.class_key, shard: shard})
      ON CREATE SET o.count = 0
    SET o.count = o.count - 1
  }
  MERGE (n:ClassShard {key: key, shard: shard})
    ON CREATE SET n.count = 0
  SET n.count = n.count + 1, p.class_key = key
}
CALL {
  WITH p
  WITH p WHERE p.class_key IS NOT NULL AND (p.tools_key IS NULL OR p.tools_key <> p.class_key)
  WITH collect(p) AS ps
#include class_tools
}
