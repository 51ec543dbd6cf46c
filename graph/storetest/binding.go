package storetest

import (
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/binding"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/procedures"
)

// SampleBinding is a binding with every part set (a nested procedure
// present and one absent), for round trips.
func SampleBinding(codeHash string) *binding.Binding {
	return &binding.Binding{
		CodeHash: codeHash, StatementHash: "sha256:" + hashOf("5"),
		Signature: []string{"kill_job", "proc__x__y", "proc__z"}, ReadOnly: false, StateChangingTools: []string{"kill_job"},
		Tools: []binding.BoundTool{{Name: "kill_job", SchemaHash: "sha256:" + hashOf("6")}},
		Nested: []binding.BoundNested{
			{Name: "proc__x__y", CodeHash: hashOf("7"), ReadOnly: true, StateChangingTools: []string{}},
			{Name: "proc__z", CodeHash: binding.NestedAbsent, StateChangingTools: []string{}},
		},
	}
}

// testBindings: every standing authorization keeps its binding as it was
// stored — a grant (Get, Granted), a session policy (Policy, Policies) and
// a turn (GetApproval through its transitions) — and one stored without a
// binding comes back without one (binding.InactiveUnbound).
func testBindings(t *testing.T, newStore NewStore) {
	t.Run("grant", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		name := NameOf(sigAB...)
		g := &procedures.Grant{Enabled: true, GrantedBy: "op", GrantedAt: At(1), Reason: "r", Binding: SampleBinding("h1")}
		if _, err := s.SetGrant(ctx, name, g, "h1", nil, Decision(audit.KindGrant, name, "h1", At(1))); err != nil {
			t.Fatal(err)
		}
		requireEqual(t, "grant binding", MustGet(t, s, name).Grant.Binding, g.Binding)
		granted := MustGranted(t, s)
		if len(granted) != 1 {
			t.Fatalf("Granted = %v", names(granted))
		}
		requireEqual(t, "granted binding", granted[0].Grant.Binding, g.Binding)
		unbound := *g
		unbound.Binding = nil
		if _, err := s.SetGrant(ctx, name, &unbound, "h1", nil, Decision(audit.KindGrant, name, "h1", At(2))); err != nil {
			t.Fatal(err)
		}
		if b := MustGet(t, s, name).Grant.Binding; b != nil {
			t.Fatalf("a grant stored without a binding came back with %+v", b)
		}
	})

	t.Run("policy", func(t *testing.T) {
		s := turnStore(t, newStore(t))
		p := gate.SessionPolicy{SessionID: "s1", CodeHash: hashOf("a"), Policy: gate.ChoiceAutoRun,
			SetBy: "op", SetAt: At(1), RequestedBy: "agent", Binding: SampleBinding(hashOf("a"))}
		if err := s.PutPolicy(ctx, p, Decision(audit.KindPolicy, "", p.CodeHash, At(1))); err != nil {
			t.Fatal(err)
		}
		got, ok, err := s.Policy(ctx, "s1", p.CodeHash)
		if err != nil || !ok {
			t.Fatalf("Policy = %v, %v", ok, err)
		}
		requireEqual(t, "policy binding", got.Binding, p.Binding)
		ps, err := s.Policies(ctx, "s1")
		if err != nil || len(ps) != 1 {
			t.Fatalf("Policies = %v, %v", ps, err)
		}
		requireEqual(t, "policies binding", ps[0].Binding, p.Binding)
	})

	t.Run("turn", func(t *testing.T) {
		s := turnStore(t, newStore(t))
		r := PendingTurn("s1", At(0), 1<<40)
		r.Binding = SampleBinding(r.CodeHash)
		MustCreateApproval(t, s, r, 10, At(0))
		got, err := s.GetApproval(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		requireEqual(t, "pending turn binding", got.Binding, r.Binding)
		next := *got
		next.Status = gate.TurnApproved
		next.Binding = SampleBinding(hashOf("b"))
		if _, err := s.TransitionTurn(ctx, next, []gate.TurnStatus{gate.TurnPending}, true, At(1)); err != nil {
			t.Fatal(err)
		}
		got, err = s.GetApproval(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		requireEqual(t, "approved turn binding", got.Binding, next.Binding)
	})
}
