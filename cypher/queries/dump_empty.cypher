// Whether the database holds any procedure, cause, decision or catalogue
// tool (Store.Empty).
RETURN EXISTS { MATCH (:Procedure) } OR EXISTS { MATCH (:Cause) } OR EXISTS { MATCH (:Decision) }
  OR EXISTS { MATCH (t:Tool) WHERE t.in_catalogue } AS used;
