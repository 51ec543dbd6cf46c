package neo4j

import (
	"testing"

	"github.com/procgraph/procgraph/graph/storetest"
)

func TestStore(t *testing.T) {
	settings(t)
	storetest.RunStoreTests(t, newStore)
}
