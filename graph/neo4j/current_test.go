package neo4j

import (
	"fmt"
	"testing"

	"github.com/procgraph/procgraph/cypher"
	"github.com/procgraph/procgraph/procedures"
)

// TestBecomesCurrentIsGos: fragments/becomes_current.cypher, which
// capture.cypher and merge_versions.cypher include, answers as
// procedures.BecomesCurrent on every case — no current version, a
// succeeded or a failed one, against a succeeded or a failed version —
// and never for the version that is already current (the Go callers skip
// that one before they ask).
func TestBecomesCurrentIsGos(t *testing.T) {
	s := openStore(t)
	stmt := "WITH $cvs AS cvs, $v AS v RETURN\n" + cypher.Expand("#include becomes_current") + " AS makeCurrent"
	for _, current := range []procedures.Status{"", procedures.StatusSucceeded, procedures.StatusFailed} {
		for _, version := range []procedures.Status{procedures.StatusSucceeded, procedures.StatusFailed} {
			for _, same := range []bool{false, true} {
				if same && current == "" {
					continue
				}
				t.Run(fmt.Sprintf("current %q version %s same %v", current, version, same), func(t *testing.T) {
					cvs := []any{}
					if current != "" {
						cvs = append(cvs, map[string]any{"code_hash": "h1", "status": string(current)})
					}
					hash := "h2"
					if same {
						hash = "h1"
					}
					v := map[string]any{"code_hash": hash, "status": string(version)}
					if same {
						v["status"] = string(current)
					}
					recs := run(t, s, stmt, map[string]any{"cvs": cvs, "v": v})
					got, ok := recs[0].Values[0].(bool)
					want := !same && procedures.BecomesCurrent(current, version)
					if !ok || got != want {
						t.Fatalf("becomes_current.cypher = %v, procedures.BecomesCurrent = %v", recs[0].Values[0], want)
					}
				})
			}
		}
	}
}
