// Keeps $verification (a procedures.Verification as JSON) as the last
// verification of the version $hash of the procedure $name
// (Store.SetVerification), in one write. No row when either is unknown.
MATCH (p:Procedure {name: $name})-[:HAS_VERSION]->(v:ProcedureVersion {code_hash: $hash})
SET v.verification = $verification
RETURN v.code_hash AS code_hash;
