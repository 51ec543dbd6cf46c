// Whether the database holds any procedure, cause, decision (but the
// records of its tokens), catalogue tool, turn or session policy
// (Store.Empty): a store's tokens are not its data.
RETURN EXISTS { MATCH (:Procedure) } OR EXISTS { MATCH (:Cause) } OR EXISTS { MATCH (d:Decision) WHERE d.kind <> 'token' }
  OR EXISTS { MATCH (t:Tool) WHERE t.in_catalogue } OR EXISTS { MATCH (:Turn) }
  OR EXISTS { MATCH (:SessionPolicy) } AS used;
