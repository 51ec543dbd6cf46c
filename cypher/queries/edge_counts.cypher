// The graph's edges by kind (procedures.EdgeCounter), from the count store.
CALL { MATCH (:Procedure)-[e:CALLS]->() RETURN count(e) AS calls }
CALL { MATCH (:Cause)-[e:INVESTIGATED_BY]->(:Procedure) RETURN count(e) AS investigated }
RETURN calls, investigated;
