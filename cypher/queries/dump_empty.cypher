// Whether the database holds any procedure, cause, decision, catalogue
// tool, turn or session policy (Store.Empty).
RETURN EXISTS { MATCH (:Procedure) } OR EXISTS { MATCH (:Cause) } OR EXISTS { MATCH (:Decision) }
  OR EXISTS { MATCH (t:Tool) WHERE t.in_catalogue } OR EXISTS { MATCH (:Turn) }
  OR EXISTS { MATCH (:SessionPolicy) } AS used;
