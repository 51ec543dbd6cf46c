// Find without filters walks the rank key (Find's order as one string, see
// fragments/rank_set.cypher) in index order: no sort.
CREATE RANGE INDEX procedure_rank IF NOT EXISTS
FOR (p:Procedure) ON (p.rank);

// Replaced by procedure_rank: nothing reads it any more.
DROP INDEX procedure_frequency IF EXISTS;

CREATE INDEX procedure_status IF NOT EXISTS
FOR (p:Procedure) ON (p.status);

// Versions of one procedure.
CREATE INDEX procedure_version_procedure IF NOT EXISTS
FOR (v:ProcedureVersion) ON (v.procedure);

// The catalogue's tools.
CREATE INDEX tool_in_catalogue IF NOT EXISTS
FOR (t:Tool) ON (t.in_catalogue);

// The audit log, newest first, overall and per procedure.
CREATE INDEX decision_at IF NOT EXISTS
FOR (d:Decision) ON (d.at);

CREATE INDEX decision_procedure IF NOT EXISTS
FOR (d:Decision) ON (d.procedure);

// One procedure's audit records, newest first (decisions_procedure.cypher).
CREATE INDEX decision_procedure_at IF NOT EXISTS
FOR (d:Decision) ON (d.procedure, d.at);

// The audit log's other filters (GET /v1/decisions: actor, kind, outcome).
CREATE INDEX decision_actor IF NOT EXISTS
FOR (d:Decision) ON (d.actor);

CREATE INDEX decision_kind IF NOT EXISTS
FOR (d:Decision) ON (d.kind);

CREATE INDEX decision_outcome IF NOT EXISTS
FOR (d:Decision) ON (d.outcome);

// Pending turns (admission counts them) and a session's policies.
CREATE INDEX turn_status IF NOT EXISTS
FOR (t:Turn) ON (t.status);

CREATE INDEX session_policy_session IF NOT EXISTS
FOR (p:SessionPolicy) ON (p.session);

// Procedures with a stored grant (Store.Granted).
CREATE INDEX procedure_grant IF NOT EXISTS
FOR (p:Procedure) ON (p.grant_enabled);

// The recordings of a version, and of a procedure (Store.Recordings,
// fragments/recording_put.cypher).
CREATE INDEX recording_version IF NOT EXISTS
FOR (r:Recording) ON (r.procedure, r.code_hash);

// The tokens changed since a revision (Store.TokensSince: every instance
// reads them at most once a second).
CREATE INDEX token_revision IF NOT EXISTS
FOR (t:Token) ON (t.revision);
