// Uniqueness constraints on every key. Each one also gives its key an index,
// and makes MERGE on the key safe under concurrency: a second transaction
// merging the same key waits for the first and then matches its node.

// One Procedure per tool-call signature, keyed by its name.
CREATE CONSTRAINT procedure_name IF NOT EXISTS
FOR (p:Procedure) REQUIRE p.name IS UNIQUE;

// One ProcedureVersion per distinct code hash of a procedure: id is
// procedure name + "|" + code hash.
CREATE CONSTRAINT procedure_version_id IF NOT EXISTS
FOR (v:ProcedureVersion) REQUIRE v.id IS UNIQUE;

CREATE CONSTRAINT cause_name IF NOT EXISTS
FOR (c:Cause) REQUIRE c.name IS UNIQUE;

CREATE CONSTRAINT tool_name IF NOT EXISTS
FOR (t:Tool) REQUIRE t.name IS UNIQUE;

// A usage key counted once for one owner (procedure, version or cause edge):
// id is a JSON array [scope, owner..., key].
CREATE CONSTRAINT usage_key_id IF NOT EXISTS
FOR (u:UsageKey) REQUIRE u.id IS UNIQUE;

CREATE CONSTRAINT decision_id IF NOT EXISTS
FOR (d:Decision) REQUIRE d.id IS UNIQUE;

// The single catalogue node (id "current") holds the catalogue revision.
CREATE CONSTRAINT catalogue_id IF NOT EXISTS
FOR (c:Catalogue) REQUIRE c.id IS UNIQUE;

// One ProcedureClass per class of procedures (fragments/class_sync.cypher),
// holding its parts (and their number, as a version before the shards kept
// it).
CREATE CONSTRAINT procedure_class_key IF NOT EXISTS
FOR (k:ProcedureClass) REQUIRE k.key IS UNIQUE;

// The shards of a class's number (fragments/class_count.cypher).
CREATE CONSTRAINT class_shard_key IF NOT EXISTS
FOR (s:ClassShard) REQUIRE (s.key, s.shard) IS UNIQUE;

// The stripes of the catalogue's write lock (catalogue_lock.cypher).
CREATE CONSTRAINT catalogue_stripe_id IF NOT EXISTS
FOR (s:CatalogueStripe) REQUIRE s.id IS UNIQUE;

// The one import in progress (id "current"), if any: procgraph import.
CREATE CONSTRAINT import_marker_id IF NOT EXISTS
FOR (m:ImportMarker) REQUIRE m.id IS UNIQUE;

// The turn gate: turns awaiting or past review, the one gate node that
// serialises admission, and session policies (id: session, a 0 char, code hash).
CREATE CONSTRAINT turn_id IF NOT EXISTS
FOR (t:Turn) REQUIRE t.id IS UNIQUE;

CREATE CONSTRAINT turn_gate_id IF NOT EXISTS
FOR (g:TurnGate) REQUIRE g.id IS UNIQUE;

CREATE CONSTRAINT session_policy_id IF NOT EXISTS
FOR (p:SessionPolicy) REQUIRE p.id IS UNIQUE;

// One ToolClass per tool and class of procedures calling it
// (fragments/class_tools.cypher), holding their number.
CREATE CONSTRAINT tool_class_key IF NOT EXISTS
FOR (k:ToolClass) REQUIRE (k.tool, k.key) IS UNIQUE;

// The shards of a ToolClass's number (fragments/class_tools.cypher).
CREATE CONSTRAINT tool_class_shard_key IF NOT EXISTS
FOR (s:ToolClassShard) REQUIRE (s.tool, s.key, s.shard) IS UNIQUE;

// One Recording per version and argument set (procedures.RecordingID).
CREATE CONSTRAINT recording_id IF NOT EXISTS
FOR (r:Recording) REQUIRE r.id IS UNIQUE;

// One Token per holder, and per token hash (never the token): the bearer
// tokens (package tokens). The single TokenRevision node (id "current")
// holds the store's token revision, bumped by every change of a token.
CREATE CONSTRAINT token_holder IF NOT EXISTS
FOR (t:Token) REQUIRE t.holder IS UNIQUE;

CREATE CONSTRAINT token_sha256 IF NOT EXISTS
FOR (t:Token) REQUIRE t.sha256 IS UNIQUE;

CREATE CONSTRAINT token_revision_id IF NOT EXISTS
FOR (r:TokenRevision) REQUIRE r.id IS UNIQUE;

// The single AuthRevision node (id "current") holds the store's
// authorization revision, moved by every write that can change what a grant
// or a session policy decides (fragments/auth_bump.cypher).
CREATE CONSTRAINT auth_revision_id IF NOT EXISTS
FOR (r:AuthRevision) REQUIRE r.id IS UNIQUE;
