// The records a dump holds (Store.Dump's header), from the count store.
CALL { MATCH (p:Procedure) RETURN count(p) AS procedures }
CALL { MATCH (v:ProcedureVersion) RETURN count(v) AS versions }
CALL { MATCH (c:Cause) RETURN count(c) AS causes }
CALL { MATCH (u:UsageKey) RETURN count(u) AS usage }
CALL { MATCH (:Cause)-[e:INVESTIGATED_BY]->(:Procedure) RETURN count(e) AS edges }
CALL { MATCH (d:Decision) RETURN count(d) AS decisions }
CALL { MATCH (t:Turn) RETURN count(t) AS approvals }
CALL { MATCH (sp:SessionPolicy) RETURN count(sp) AS policies }
CALL { MATCH (r:Recording) RETURN count(r) AS recordings }
RETURN procedures, versions, causes, usage, edges, decisions, approvals, policies, recordings;
