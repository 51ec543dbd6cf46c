// Deletes the recordings of the procedure $name, or every recording when
// $name is null (Store.DeleteRecordings), returning how many, and whether
// the procedure exists.
OPTIONAL MATCH (p:Procedure {name: $name})
CALL {
  OPTIONAL MATCH (r:Recording)
  WHERE $name IS NULL OR r.procedure = $name
  WITH collect(r) AS rs
  FOREACH (x IN rs | DELETE x)
  RETURN size(rs) AS deleted
}
RETURN $name IS NULL OR p IS NOT NULL AS exists, deleted;
