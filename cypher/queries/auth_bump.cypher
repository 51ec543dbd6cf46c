// Moves the store's authorization revision (Store.AuthRevision), in the
// transaction of a write of several statements that can change what a
// grant or a session policy decides (a policy set or deleted, a
// retirement, a demotion lifted, a catalogue, a rebaseline, an import's
// batch); one statement's writes include fragments/auth_bump instead.
MERGE (ar:AuthRevision {id: 'current'})
SET ar.revision = coalesce(ar.revision, 0) + 1;
