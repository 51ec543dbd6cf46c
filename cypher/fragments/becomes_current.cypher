// Whether v becomes p's current version (procedures.BecomesCurrent, its one
// definition: graph/neo4j's TestBecomesCurrentIsGos checks this expression
// against it on every case), an expression over cvs (p's current versions,
// collected: none or one) and v: p has no current version, or v is not it,
// v succeeded and the current one did not. capture.cypher and
// merge_versions.cypher name it.
(size(cvs) = 0 OR (cvs[0] <> v AND cvs[0].status <> 'succeeded' AND v.status = 'succeeded'))
