// The Tool nodes of a version's baseline (procedures.BaselineOf): for each
// name of the list baselineNames (bound by the caller: a signature), its
// Tool while it is in the catalogue, by name.
COLLECT {
  UNWIND baselineNames AS n
  MATCH (t:Tool {name: n})
  WHERE t.in_catalogue AND t.contract IS NOT NULL
  RETURN t ORDER BY t.name
}
