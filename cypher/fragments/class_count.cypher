// The number of procedures in the class of the ProcedureClass node k, an
// expression: the count kept on k (by a version before the shards; 0 on a
// node made since) plus its ClassShard nodes' counts (fragments/class_sync).
// Every reader of a class's number names it (classes.cypher,
// find_classes.cypher, find_filtered.cypher, search.cypher).
reduce(n = coalesce(k.count, 0), c IN COLLECT { MATCH (s:ClassShard {key: k.key}) WHERE s.shard IS NOT NULL RETURN s.count } | n + c)
