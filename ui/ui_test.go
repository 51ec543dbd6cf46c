package ui

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/procedures"
)

// TestAuditKinds: the audit page offers exactly the API's decision kinds
// (an unknown kind would be refused by GET /v1/decisions).
func TestAuditKinds(t *testing.T) {
	src, err := assets.ReadFile("static/pages/audit.js")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`const KINDS = \[([^\]]*)\];`).FindSubmatch(src)
	if m == nil {
		t.Fatal("audit.js has no KINDS list")
	}
	var kinds []string
	for _, k := range strings.Split(string(m[1]), ",") {
		kinds = append(kinds, strings.Trim(strings.TrimSpace(k), "'"))
	}
	if want := procedures.DecisionKindNames(); !slices.Equal(kinds, want) {
		t.Fatalf("the audit page offers kinds %v, the API has %v", kinds, want)
	}
}
