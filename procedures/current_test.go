package procedures_test

import (
	"testing"

	"github.com/procgraph/procgraph/procedures"
)

func TestBecomesCurrent(t *testing.T) {
	ok, failed := procedures.StatusSucceeded, procedures.StatusFailed
	cases := []struct {
		name             string
		current, version procedures.Status
		want             bool
	}{
		{"the first version, succeeded", "", ok, true},
		{"the first version, failed", "", failed, true},
		{"a succeeded version after a failed current", failed, ok, true},
		{"a failed version after a failed current", failed, failed, false},
		{"a succeeded version after a succeeded current", ok, ok, false},
		{"a failed version after a succeeded current", ok, failed, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := procedures.BecomesCurrent(c.current, c.version); got != c.want {
				t.Fatalf("BecomesCurrent(%q, %q) = %v, want %v", c.current, c.version, got, c.want)
			}
		})
	}
}
