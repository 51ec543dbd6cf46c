// The signatures and retirement of the procedures named in $names that
// exist (for procedures.Reclassify).
UNWIND $names AS name
MATCH (p:Procedure {name: name})
RETURN p.name AS name, p.signature AS signature, p.retired_at IS NOT NULL AS retired;
