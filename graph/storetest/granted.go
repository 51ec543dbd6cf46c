package storetest

import (
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/procedures"
)

// testGranted: Granted lists exactly the procedures whose grant is held
// (revoked, disabled and never-granted ones are absent, a grant bound to a hash
// no longer current is still held), by name, as Get returns them.
func testGranted(t *testing.T, newStore NewStore) {
	t.Run("none granted", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		if ps := MustGranted(t, s); len(ps) != 0 {
			t.Fatalf("Granted = %v, want none", names(ps))
		}
	})

	t.Run("the held grants by name", func(t *testing.T) {
		s := newStore(t)
		sigs := [][]string{{"tool_c"}, {"tool_a"}, {"tool_b"}, {"tool_d"}}
		for i, sig := range sigs {
			MustCapture(t, s, In(sig, "h1", "k1", At(i)))
		}
		grant := func(sig []string, g *procedures.Grant, at int) {
			t.Helper()
			name, kind := NameOf(sig...), audit.KindGrant
			if g == nil {
				kind = audit.KindRevoke
			}
			if _, err := s.SetGrant(ctx, name, g, "h1", nil, Decision(kind, name, "h1", At(at))); err != nil {
				t.Fatalf("SetGrant(%s): %v", name, err)
			}
		}
		held := func(by string) *procedures.Grant {
			return &procedures.Grant{Enabled: true, GrantedBy: by, GrantedAt: At(10), Reason: "reviewed"}
		}
		grant(sigs[0], held("carol"), 10)
		grant(sigs[1], held("alice"), 11)
		grant(sigs[2], held("bob"), 12)
		grant(sigs[2], nil, 13)                                                     // revoked
		grant(sigs[3], &procedures.Grant{GrantedBy: "dave", GrantedAt: At(13)}, 13) // stored, not enabled
		// A new current version: the grant stays held (inactive, code_changed).
		MustCapture(t, s, In(sigs[1], "h2", "k2", At(14)))
		if _, err := s.Promote(ctx, NameOf(sigs[1]...), "h2", Decision(audit.KindPromote, NameOf(sigs[1]...), "h2", At(15))); err != nil {
			t.Fatalf("Promote: %v", err)
		}

		got := MustGranted(t, s)
		want := []string{NameOf(sigs[1]...), NameOf(sigs[0]...)}
		if len(got) != len(want) {
			t.Fatalf("Granted = %v, want %v", names(got), want)
		}
		for i, p := range got {
			if p.Name != want[i] {
				t.Fatalf("Granted = %v, want %v", names(got), want)
			}
			requireEqual(t, "Granted "+p.Name, p, MustGet(t, s, p.Name))
		}
		if g := got[0].Grant; g.GrantedBy != "alice" || g.CodeHash != "h1" || got[0].CodeHash != "h2" {
			t.Errorf("%s: grant %+v on current %s, want alice's bound to h1 on h2", got[0].Name, g, got[0].CodeHash)
		}
	})
}
