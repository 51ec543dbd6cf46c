package neo4jstore

import (
	"testing"

	"github.com/procgraph/procgraph/graph/storetest"
)

func TestStore(t *testing.T) {
	settings(t)
	storetest.RunStoreTests(t, newStore)
}
