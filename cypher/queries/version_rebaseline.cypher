// Sets a version's drift baseline (Store.Rebaseline): $baseline is its
// procedures.Baseline as JSON, $keys its contract keys.
MATCH (p:Procedure {name: $name})-[:HAS_VERSION]->(v:ProcedureVersion {code_hash: $hash})
SET v.baseline = $baseline, v.baseline_keys = $keys
RETURN p.code_hash AS current,
       v {.code_hash, .code, .dialect, .parameters, .input_schema, .opaque, .warnings,
          .summary, .metadata, .captured_at, .frequency, .status, .baseline} AS version;
