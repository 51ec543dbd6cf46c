// The procedures whose signature holds any of $names (tools or nested
// proc__ references: both are CALLS edges to a Tool of that name).
UNWIND $names AS name
MATCH (p:Procedure)-[:CALLS]->(:Tool {name: name})
RETURN DISTINCT p.name AS name;
