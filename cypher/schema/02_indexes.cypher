// Find orders by frequency first.
CREATE INDEX procedure_frequency IF NOT EXISTS
FOR (p:Procedure) ON (p.frequency);

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
