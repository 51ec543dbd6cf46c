// The signatures of the procedures named in $names that exist (for
// procedures.Reclassify).
UNWIND $names AS name
MATCH (p:Procedure {name: name})
RETURN p.name AS name, p.signature AS signature;
