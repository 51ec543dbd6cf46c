// Deletes the policies of the given ids.
MATCH (p:SessionPolicy)
WHERE p.id IN $ids
DELETE p;
