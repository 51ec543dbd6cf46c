// One capture (Store.Capture), returning the procedure as it now is (the
// procedure fragment), so nothing is read back in a second round trip.
// Rules: procedures.CaptureInput.
//
// A new procedure must be classified in the same transaction. The store
// computes the classification before the statement (procedures.Reclassify,
// with the catalogue it holds) and passes it as $class {revisions, read_only,
// problem}; the statement applies it only if it is still right when the
// procedure is created: under the catalogue's write lock, the stored
// catalogue is that revision and no stored procedure calls the new one (its
// callers would need reclassifying too). Otherwise it returns no row and
// writes nothing but the lock, and the store captures again with $class
// null: then the statement creates the procedure unclassified, returns its
// callers, and the store classifies it (and them) in the same transaction
// (see Store.Capture). The catalogue lock serialises new procedures with
// catalogue changes, the two things a classification depends on: the
// catalogue's writers (catalogue_lock.cypher) take the Catalogue node and
// every one of its $stripes CatalogueStripe nodes, and so does a new
// procedure captured with $class null; one with $class, whose
// classification depends on the stored catalogue and its own signature
// only, takes stripe $stripe alone (Store.Capture: from its name), so new
// procedures wait for the catalogue's writers, and they for them, but not
// for each other (docs/adr/0036).
//
// Usage keys are UsageKey nodes under a uniqueness constraint on id: a key is
// counted only by the transaction that created its node (MERGE ... ON CREATE
// marks it), so re-commits never double-count and concurrent captures with
// the same key count once. The first write (SET p.updated_at) takes the
// write lock on the Procedure node for the rest of the transaction, which
// serialises captures of one procedure: every read below sees the committed
// state of the others and no increment is lost.
// The reuse suggestion's page ($page: procedures.CaptureInput.Page), read
// first, before anything is written or locked (fragments/filtered_page,
// Find's own page): pages is [its row], [] when none is asked. The capture
// itself is the subquery after it, whose row is the statement's.
CALL {
  CALL {
    UNWIND CASE WHEN $page THEN [1] ELSE [] END AS asked
#include filtered_page
    RETURN {unknown: unknown, procedures: procedures, complete: complete} AS page
  }
  RETURN collect(page) AS pages
}
CALL {
OPTIONAL MATCH (existing:Procedure {name: $name})
CALL {
  WITH existing
  UNWIND CASE WHEN existing IS NULL THEN [1] ELSE [] END AS _
  CALL {
    UNWIND CASE WHEN $class IS NULL THEN [1] ELSE [] END AS _
    MERGE (cat:Catalogue {id: 'current'})
    SET cat.locked_at = $at
  }
  CALL {
    UNWIND CASE WHEN $class IS NULL THEN range(0, $stripes - 1) ELSE [$stripe] END AS i
    MERGE (s:CatalogueStripe {id: i})
    SET s.locked_at = $at
    RETURN count(s) AS locked
  }
  // Read once the locks are held (locked: after them).
  OPTIONAL MATCH (cat:Catalogue {id: 'current'})
  WHERE locked > 0
  RETURN collect(coalesce(cat.revision, '')) AS revisions
}
// The catalogue the capture was prepared under (its literals lifted, its
// name chosen): $catalogue, the revisions the catalogue node reads as when
// it is that one (null checks nothing). Unless it is the stored one, the
// statement returns no row and writes nothing but the lock, and
// Store.Capture answers catalogue_changed (procedures.CaptureInput). One
// seek of the unique Catalogue node, after the lock: no round trip of its
// own (docs/adr/0038).
CALL {
  WITH revisions
  OPTIONAL MATCH (cur:Catalogue {id: 'current'})
  RETURN coalesce(cur.revision, '') AS stored
}
WITH existing, revisions, stored
WHERE $catalogue IS NULL OR stored IN $catalogue
WITH existing IS NOT NULL OR $class IS NULL OR
     (revisions[0] IN $class.revisions AND NOT EXISTS { (:Procedure)-[:CALLS]->(:Tool {name: $name}) }) AS go
WHERE go
MERGE (p:Procedure {name: $name})
  ON CREATE SET
    p.signature = $signature,
    p.summary = '',
    p.frequency = 0,
    p.use_count = 0,
    p.created_at = $at,
    p.read_only = $class.read_only,
    p.problem = $class.problem,
    // Its class counts' shard (fragments/class_sync): its catalogue stripe.
    p.shard = $stripe,
    p._new = true
// A procedure of another signature under this name: no row, nothing written
// (Store.Capture answers signature_mismatch and the transaction rolls back).
WITH p WHERE p.signature = $signature
SET p.updated_at = $at
WITH p, p._new IS NOT NULL AS created
REMOVE p._new
SET p.summary = CASE WHEN p.summary = '' THEN $summary ELSE p.summary END
// The capture's search parts ($parts, at most $max in all); searched: whether
// they changed the search text (Store.Capture then waits for the index before
// its next search: graph/neo4j/searchfresh.go).
WITH p, created, size(coalesce(p.search_parts, [])) AS partsBefore, $parts AS add
#include search_parts
WITH p, created, size(p.search_parts) <> partsBefore AS searched
FOREACH (toolName IN CASE WHEN created THEN $signature ELSE [] END |
  MERGE (t:Tool {name: toolName})
  CREATE (p)-[:CALLS]->(t)
)

// The version, by code hash; else the first version of the same program
// (the earliest captured with $canonical, its canonical hash: a capture of
// another text of the program is a use of that version, which keeps its
// code); else a new one. Store.Capture's rule (graph/embedded's
// versionOfProgram).
WITH p, created, searched
CALL {
  WITH p
  OPTIONAL MATCH (p)-[:HAS_VERSION]->(same:ProcedureVersion {canonical_hash: $canonical})
  WHERE $canonical IS NOT NULL
  WITH same ORDER BY same.captured_at, same.code_hash
  RETURN collect(same.id) AS sameIds
}
WITH p, created, searched,
     CASE WHEN size(sameIds) = 0 OR EXISTS { (p)-[:HAS_VERSION]->(:ProcedureVersion {id: $versionId}) }
          THEN $versionId ELSE sameIds[0] END AS versionId
MERGE (v:ProcedureVersion {id: versionId})
  ON CREATE SET
    v.procedure = $name,
    v.code_hash = $hash,
    v.canonical_hash = $canonical,
    v.code = $code,
    v.dialect = $dialect,
    v.parameters = $parameters,
    v.input_schema = $inputSchema,
    v.opaque = $opaque,
    v.warnings = $warnings,
    v.summary = $summary,
    v.metadata = $metadata,
    v.captured_at = $capturedAt,
    v.status = $status,
    v.frequency = 0,
    v._new = true
WITH p, created, searched, v, v._new IS NOT NULL AS versionCreated
REMOVE v._new
FOREACH (_ IN CASE WHEN versionCreated THEN [1] ELSE [] END |
  CREATE (p)-[:HAS_VERSION]->(v)
)
// A new version's drift baseline: its tools' contracts as the catalogue
// holds them now (procedures.BaselineOf).
WITH p, created, searched, v, versionCreated, CASE WHEN versionCreated THEN $baselineTools ELSE [] END AS baselineNames
WITH p, created, searched, v, versionCreated,
#include baseline_tools
  AS bts
SET v.baseline = CASE WHEN versionCreated THEN
#include baseline_json
      ELSE v.baseline END,
    v.baseline_keys = CASE WHEN versionCreated THEN [t IN bts | t.contract_key] ELSE v.baseline_keys END
WITH p, created, searched, v, versionCreated, v.status AS statusWas
// A failed version succeeds once a capture of its code succeeds.
SET v.status = CASE WHEN $succeeded THEN 'succeeded' ELSE v.status END

// The current version: the first succeeded one; until one exists, the first.
WITH p, created, searched, v, versionCreated, statusWas
OPTIONAL MATCH (p)-[cur:CURRENT]->(cv:ProcedureVersion)
WITH p, created, searched, v, versionCreated, statusWas, collect(cur) AS curs, collect(cv) AS cvs
WITH p, created, searched, v, versionCreated, statusWas, curs,
#include becomes_current
     AS makeCurrent
FOREACH (r IN CASE WHEN makeCurrent THEN curs ELSE [] END | DELETE r)
FOREACH (_ IN CASE WHEN makeCurrent THEN [1] ELSE [] END |
  CREATE (p)-[:CURRENT]->(v)
)
// The procedure mirrors its current version's hash, status and opacity, for Find.
SET p.code_hash = CASE WHEN makeCurrent THEN v.code_hash ELSE p.code_hash END,
    p.status = CASE WHEN makeCurrent OR p.code_hash = v.code_hash THEN v.status ELSE p.status END,
    p.opaque = CASE WHEN makeCurrent THEN v.opaque ELSE p.opaque END,
    // A new current version starts undemoted.
    p.demoted = CASE WHEN makeCurrent THEN false ELSE p.demoted END
// What a grant decides by changed — a new procedure, its current version,
// or that version's status — and the authorization revision moves with it.
WITH p, created, searched, v, versionCreated,
     created OR makeCurrent OR (p.code_hash = v.code_hash AND NOT versionCreated AND coalesce(statusWas, '') <> v.status) AS bump
#include auth_bump
// The class it is counted in follows (a new procedure is classified, and
// counted, by Store.Capture after this statement).
WITH p, created, searched, v, versionCreated
#include class_sync

// The usage key, once per version (every capture).
WITH p, created, searched, v, versionCreated, v.code_hash AS codeHash
MERGE (vk:UsageKey {id: 'v:' + toString(size(v.id)) + ':' + v.id + ':' + $key})
  ON CREATE SET vk.scope = 'version', vk.key = $key, vk.procedure = $name, vk.code_hash = v.code_hash, vk.at = $at, vk._new = true
WITH p, created, searched, v, versionCreated, codeHash, vk, vk._new IS NOT NULL AS versionCounted
REMOVE vk._new
SET v.frequency = v.frequency + CASE WHEN versionCounted THEN 1 ELSE 0 END

// Once per procedure (succeeded captures only).
WITH p, created, searched, versionCreated, codeHash
CALL {
  WITH p
  UNWIND CASE WHEN $succeeded THEN [$key] ELSE [] END AS k
  MERGE (pk:UsageKey {id: 'p:' + toString(size($name)) + ':' + $name + ':' + k})
    ON CREATE SET pk.scope = 'procedure', pk.key = k, pk.procedure = $name, pk.at = $at, pk._new = true
  WITH pk, pk._new IS NOT NULL AS isNew
  REMOVE pk._new
  RETURN sum(CASE WHEN isNew THEN 1 ELSE 0 END) AS counted
}
SET p.frequency = p.frequency + counted
// The rank key Find orders by (fragments/rank_set.cypher), after every change
// of frequency.
#include rank_set

// The cause, its edge, and the key once per edge (succeeded captures only).
WITH p, created, searched, versionCreated, codeHash, counted
CALL {
  WITH p
  UNWIND CASE WHEN $cause IS NULL THEN [] ELSE [$cause] END AS causeName
  MERGE (c:Cause {name: causeName})
    ON CREATE SET c.description = $causeDescription, c.created_at = $at
  FOREACH (_ IN CASE WHEN c.description = '' AND $causeDescription <> '' THEN [1] ELSE [] END |
    SET c.description = $causeDescription
  )
  MERGE (c)-[e:INVESTIGATED_BY]->(p)
    ON CREATE SET e.frequency = 0
  WITH c, e
  UNWIND CASE WHEN $succeeded THEN [$key] ELSE [] END AS k
  MERGE (ck:UsageKey {id: 'c:' + toString(size(c.name)) + ':' + c.name + ':' + toString(size($name)) + ':' + $name + ':' + k})
    ON CREATE SET ck.scope = 'cause', ck.key = k, ck.procedure = $name, ck.cause = c.name, ck.at = $at, ck._new = true
  WITH e, ck, ck._new IS NOT NULL AS isNew
  REMOVE ck._new
  SET e.frequency = e.frequency + CASE WHEN isNew THEN 1 ELSE 0 END
  RETURN count(*) AS linked
}
WITH p, created, searched, versionCreated, codeHash, counted
RETURN created, versionCreated, counted > 0 AS counted, searched, codeHash,
  // With $class null, a new procedure is classified next, in this
  // transaction (Store.Capture), with the procedures that call it.
  CASE WHEN created AND $class IS NULL THEN [(caller:Procedure)-[:CALLS]->(:Tool {name: $name}) | caller.name] ELSE [] END AS callers,
#include procedure
AS procedure
}
RETURN *;
