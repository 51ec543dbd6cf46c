// The ProcedureClass node k of p's class, created when missing with the
// class's parts and no procedure counted (after MERGE (k:ProcedureClass
// {key: ...})).
ON CREATE SET k.status = p.status, k.opaque = coalesce(p.opaque, false), k.tools = size(p.signature),
              k.read_only = p.read_only, k.problem = p.problem <> '', k.retired = p.retired_at IS NOT NULL,
              k.demoted = coalesce(p.demoted, false),
              k.count = 0
