// The time of one stored decision (a ListDecisions cursor).
MATCH (d:Decision {id: $id})
RETURN d.at AS at;
