package neo4j

import (
	"strings"
	"testing"

	"github.com/procgraph/procgraph/cypher"
)

// TestGrantedPlan: Granted selects the procedures with a grant through the
// procedure_grant index, not by reading every procedure. The selection is
// granted.cypher up to its RETURN (whose map projection puts the selection
// in a branch the driver's plan does not show, see requireNoScan).
func TestGrantedPlan(t *testing.T) {
	stmt, _, ok := strings.Cut(cypher.Query("granted"), "RETURN")
	if !ok {
		t.Fatal("granted.cypher has no RETURN")
	}
	requireNoScan(t, openStore(t), "granted", stmt+"RETURN p.name")
}
