// Every class of procedures with its number (fragments/class_sync.cypher):
// few, whatever the number of procedures.
MATCH (k:ProcedureClass)
WHERE k.count > 0
RETURN k.key AS key, k.status AS status, k.opaque AS opaque, k.tools AS tools,
       k.read_only AS read_only, k.problem AS problem, coalesce(k.retired, false) AS retired, coalesce(k.demoted, false) AS demoted, k.count AS count;
