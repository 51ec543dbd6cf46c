// One version of a procedure, with its code. No row when either is unknown.
MATCH (p:Procedure {name: $name})-[:HAS_VERSION]->(v:ProcedureVersion {code_hash: $hash})
RETURN p.code_hash AS current,
       v {.code_hash, .canonical_hash, .code, .dialect, .parameters, .input_schema, .opaque, .warnings,
          .summary, .metadata, .captured_at, .frequency, .status, .baseline, .health, .verification} AS version;
