// Records $result as the result of the run the decision $id allowed
// (Store.SetDecisionResult), unless the decision has one already; returns
// whether the decision exists and the result it now holds.
OPTIONAL MATCH (d:Decision {id: $id})
FOREACH (x IN CASE WHEN d IS NOT NULL AND d.result IS NULL THEN [d] ELSE [] END |
  SET x.result = $result
)
RETURN d IS NOT NULL AS found, d.result AS result;
