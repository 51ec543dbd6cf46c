// Benchmark only: deletes what one benchmark run wrote, and nothing else:
// the nodes of its namespace ($ns: tool and cause names start with it,
// procedure names with 'proc__' + $ns), after uncount.cypher. Run in an
// implicit transaction.
CALL {
  MATCH (p:Procedure) WHERE p.name STARTS WITH $proc RETURN p AS n
  UNION
  MATCH (v:ProcedureVersion) WHERE v.id STARTS WITH $proc RETURN v AS n
  UNION
  MATCH (d:Decision) WHERE d.procedure STARTS WITH $proc RETURN d AS n
  UNION
  MATCH (u:UsageKey) WHERE u.procedure STARTS WITH $proc RETURN u AS n
  UNION
  MATCH (t:Tool) WHERE t.name STARTS WITH $ns RETURN t AS n
  UNION
  MATCH (c:Cause) WHERE c.name STARTS WITH $ns RETURN c AS n
  UNION
  MATCH (k:ToolClass) WHERE k.tool STARTS WITH $ns RETURN k AS n
  UNION
  MATCH (k:ToolClassShard) WHERE k.tool STARTS WITH $ns RETURN k AS n
}
CALL { WITH n DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS;
