package neo4j

import (
	"testing"

	"github.com/procgraph/procgraph/graph/storetest"
)

// TestCanonicalBackfill: versions stored without a canonical hash get the
// hash of their code when a store is opened, in batches; a code that does
// not analyse is left without one and not read again; a capture of the
// program then counts on the earliest captured version of it.
func TestCanonicalBackfill(t *testing.T) {
	storetest.CaptureWithoutCanonical(t, freshStore(t))
	defer func(b int) { canonicalBatch = b }(canonicalBatch)
	canonicalBatch = 2
	storetest.RequireCanonicalBackfill(t, openStore(t))
	openStore(t) // again: nothing left to compute, the broken code not read forever
}
