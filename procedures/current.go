package procedures

// BecomesCurrent is the one rule of a procedure's current version, which
// both stores apply when a capture or a merge brings a version: the
// version becomes current when the procedure has no current version
// (current is ""), or when it succeeded and the current one did not. So a
// procedure's first version is current until one succeeds, and the first
// succeeded version stays current until promoted. The Neo4j store's
// fragments/becomes_current.cypher is this expression in Cypher (its test
// checks them on every case; docs/adr/0017).
func BecomesCurrent(current, version Status) bool {
	return current == "" || current != StatusSucceeded && version == StatusSucceeded
}
