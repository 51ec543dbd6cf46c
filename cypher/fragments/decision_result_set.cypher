// Records res.result as the result of the run the decision res.id allowed,
// unless the decision has one already, leaving res, found (the decision
// exists) and result (the result it now holds).
OPTIONAL MATCH (rd:Decision {id: res.id})
FOREACH (x IN CASE WHEN rd IS NOT NULL AND rd.result IS NULL THEN [rd] ELSE [] END |
  SET x.result = res.result
)
WITH res, rd IS NOT NULL AS found, rd.result AS result
