package neo4j

import (
	"testing"

	"github.com/procgraph/procgraph/replay/replaytest"
)

// TestAcrossInstances: replaytest.AcrossInstances on Neo4j — a grant
// revoked and a session's policies deleted by one instance are honoured by
// another after its next poll of the store's authorization revision
// (auth_revision.cypher), never trusted after it.
func TestAcrossInstances(t *testing.T) {
	s := freshStore(t)
	replaytest.AcrossInstances(t, s, s)
}
