package procedures

import "testing"

// TestPolicyAppliesTo: a policy decides only its own requester's turns; one
// bound to nobody (stored or dumped before policies were bound) decides
// none.
func TestPolicyAppliesTo(t *testing.T) {
	cases := []struct {
		name, boundTo, requester string
		want                     bool
	}{
		{"its requester", "agent", "agent", true},
		{"another requester", "agent", "agent2", false},
		{"anonymous under a bound policy", "agent", "anonymous", false},
		{"bound to nobody", "", "agent", false},
		{"bound to nobody, empty requester", "", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := SessionPolicy{SessionID: "s", CodeHash: "h", Policy: ChoiceAutoRun, RequestedBy: c.boundTo}
			if got := p.AppliesTo(c.requester); got != c.want {
				t.Fatalf("AppliesTo(%q) with RequestedBy %q = %v, want %v", c.requester, c.boundTo, got, c.want)
			}
		})
	}
}
