// The key of p's class (procedures.Class: status, opacity, number of
// tools, kept read-only and problem, retired, demoted), an expression: class_sync
// and classify_load.cypher name it.
p.status + '|' + CASE WHEN p.opaque THEN 'o' ELSE '-' END + '|' + toString(size(p.signature)) + '|' +
  CASE WHEN p.read_only THEN 'r' ELSE '-' END + '|' + CASE WHEN p.problem <> '' THEN 'x' ELSE '-' END +
  CASE WHEN p.retired_at IS NULL THEN '' ELSE '|retired' END +
  CASE WHEN coalesce(p.demoted, false) THEN '|demoted' ELSE '' END
