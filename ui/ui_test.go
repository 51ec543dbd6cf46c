package ui

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/health"
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
	if want := audit.DecisionKindNames(); !slices.Equal(kinds, want) {
		t.Fatalf("the audit page offers kinds %v, the API has %v", kinds, want)
	}
}

// TestUncountedClasses: the health badges mark as "not counted" exactly
// the failure classes that do not count toward demotion
// (health.CountsTowardDemotion).
func TestUncountedClasses(t *testing.T) {
	src, err := assets.ReadFile("static/pages/health.js")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`const NEUTRAL = \[([^\]]*)\];`).FindSubmatch(src)
	if m == nil {
		t.Fatal("health.js has no NEUTRAL list")
	}
	var got []string
	for _, c := range strings.Split(string(m[1]), ",") {
		got = append(got, strings.Trim(strings.TrimSpace(c), "'"))
	}
	var want []string
	for _, c := range health.FailureClasses {
		if !health.CountsTowardDemotion(c) {
			want = append(want, c)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("the console marks %v as not counted, procedures.CountsTowardDemotion leaves out %v", got, want)
	}
}
