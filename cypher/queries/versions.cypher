// Every version of a procedure, oldest first. No row when the procedure
// does not exist.
MATCH (p:Procedure {name: $name})
OPTIONAL MATCH (p)-[:HAS_VERSION]->(v:ProcedureVersion)
WITH p, v
ORDER BY v.captured_at, v.code_hash
RETURN p.code_hash AS current,
       collect(v {.code_hash, .canonical_hash, .code, .dialect, .parameters, .input_schema, .opaque, .warnings,
                  .summary, .metadata, .captured_at, .frequency, .status, .baseline, .health, .verification}) AS versions;
