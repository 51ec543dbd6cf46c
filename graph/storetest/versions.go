package storetest

import (
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
)

func testVersions(t *testing.T, newStore NewStore) {
	name := NameOf(sigAB...)

	t.Run("oldest first with the current flag", func(t *testing.T) {
		s := newStore(t)
		// Captured out of order: CapturedAt decides, then the code hash.
		for i, c := range []struct {
			hash string
			at   int
		}{{"h_b", 2}, {"h_c", 1}, {"h_a", 2}, {"h_d", 3}} {
			in := In(sigAB, c.hash, "k", At(10+i))
			in.Version.CapturedAt = At(c.at)
			if c.hash == "h_b" {
				in = Failed(in)
			}
			MustCapture(t, s, in)
		}
		vs, err := s.Versions(ctx, name)
		if err != nil {
			t.Fatalf("Versions: %v", err)
		}
		var got []string
		var current []string
		for _, v := range vs {
			got = append(got, v.CodeHash)
			if v.Current {
				current = append(current, v.CodeHash)
			}
		}
		requireEqual(t, "order", got, []string{"h_c", "h_a", "h_b", "h_d"})
		requireEqual(t, "current", current, []string{"h_c"})
		if len(vs) == 4 && (vs[2].Status != procedures.StatusFailed || vs[0].Status != procedures.StatusSucceeded || vs[0].Frequency != 1) {
			t.Errorf("versions = %+v", vs)
		}
	})

	t.Run("unknown procedure is not found", func(t *testing.T) {
		s := newStore(t)
		_, err := s.Versions(ctx, "proc__missing")
		RequireCode(t, err, fault.CodeNotFound)
	})

	t.Run("Version returns the code", func(t *testing.T) {
		s := newStore(t)
		in := In(sigAB, "h1", "k", At(0))
		MustCapture(t, s, in)
		MustCapture(t, s, In(sigAB, "h2", "k", At(1)))
		v := MustVersion(t, s, name, "h2")
		if v.CodeHash != "h2" || v.Code == "" || v.Current || v.Status != procedures.StatusSucceeded {
			t.Errorf("Version(h2) = %+v", v)
		}
		if v := MustVersion(t, s, name, "h1"); v.Code != in.Version.Code || !v.Current {
			t.Errorf("Version(h1) = %+v", v)
		}
	})

	t.Run("Version of an unknown procedure or hash is not found", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k", At(0)))
		_, err := s.Version(ctx, "proc__missing", "h1")
		RequireCode(t, err, fault.CodeNotFound)
		_, err = s.Version(ctx, name, "nope")
		RequireCode(t, err, fault.CodeNotFound)
	})
}

func testPromote(t *testing.T, newStore NewStore) {
	name := NameOf(sigAB...)
	setup := func(t *testing.T) procedures.Store {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		MustCapture(t, s, In(sigAB, "h2", "k2", At(1)))
		MustCapture(t, s, Failed(In(sigAB, "h3", "k3", At(2))))
		return s
	}
	noDecisions := func(t *testing.T, s procedures.Store) {
		t.Helper()
		if ds := MustDecisions(t, s, audit.DecisionFilter{}); len(ds) != 0 {
			t.Errorf("a refused promote appended decisions %+v", ds)
		}
		if p := MustGet(t, s, name); p.CodeHash != "h1" {
			t.Errorf("a refused promote changed the current version to %s", p.CodeHash)
		}
	}

	t.Run("unknown procedure or version is not found", func(t *testing.T) {
		s := setup(t)
		_, err := s.Promote(ctx, "proc__missing", "h1", Decision(audit.KindPromote, "proc__missing", "h1", At(5)))
		RequireCode(t, err, fault.CodeNotFound)
		_, err = s.Promote(ctx, name, "nope", Decision(audit.KindPromote, name, "nope", At(5)))
		RequireCode(t, err, fault.CodeNotFound)
		noDecisions(t, s)
	})

	t.Run("failed version is a conflict", func(t *testing.T) {
		s := setup(t)
		_, err := s.Promote(ctx, name, "h3", Decision(audit.KindPromote, name, "h3", At(5)))
		RequireCode(t, err, fault.CodeConflict)
		noDecisions(t, s)
	})

	t.Run("invalid decision is rejected", func(t *testing.T) {
		s := setup(t)
		d := Decision(audit.KindPromote, name, "h2", At(5))
		d.ID = ""
		_, err := s.Promote(ctx, name, "h2", d)
		RequireCode(t, err, fault.CodeInvalid)
		noDecisions(t, s)
	})

	t.Run("a decision id holding another record is a conflict and writes nothing", func(t *testing.T) {
		s := setup(t)
		other := Decision(audit.KindInvoke, name, "h1", At(4))
		if err := s.AppendDecision(ctx, other); err != nil {
			t.Fatalf("AppendDecision: %v", err)
		}
		d := Decision(audit.KindPromote, name, "h2", At(5))
		d.ID = other.ID
		_, err := s.Promote(ctx, name, "h2", d)
		RequireCode(t, err, fault.CodeConflict)
		if p := MustGet(t, s, name); p.CodeHash != "h1" {
			t.Errorf("current = %s after a refused promote", p.CodeHash)
		}
		if ds := MustDecisions(t, s, audit.DecisionFilter{Procedure: name}); len(ds) != 1 || ds[0].Kind != audit.KindInvoke {
			t.Errorf("decisions = %+v", ds)
		}
	})

	t.Run("success switches current and appends the decision", func(t *testing.T) {
		s := setup(t)
		d := Decision(audit.KindPromote, name, "h2", At(5))
		p, err := s.Promote(ctx, name, "h2", d)
		if err != nil {
			t.Fatalf("Promote: %v", err)
		}
		if p.CodeHash != "h2" || MustGet(t, s, name).CodeHash != "h2" {
			t.Fatalf("current after promote = %s", p.CodeHash)
		}
		if !MustVersion(t, s, name, "h2").Current || MustVersion(t, s, name, "h1").Current {
			t.Error("Current flags did not move")
		}
		ds := MustDecisions(t, s, audit.DecisionFilter{Procedure: name})
		if len(ds) != 1 || ds[0].ID != d.ID || ds[0].Kind != audit.KindPromote {
			t.Fatalf("decisions = %+v", ds)
		}
		// Promoting back works too.
		if p, err := s.Promote(ctx, name, "h1", Decision(audit.KindPromote, name, "h1", At(6))); err != nil || p.CodeHash != "h1" {
			t.Fatalf("promote back: %v", err)
		}
	})
}

func testSetGrant(t *testing.T, newStore NewStore) {
	name := NameOf(sigAB...)
	grant := func() *procedures.Grant {
		return &procedures.Grant{Enabled: true, GrantedBy: "alice", GrantedAt: At(3), Reason: "reviewed"}
	}
	setup := func(t *testing.T) procedures.Store {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		MustCapture(t, s, In(sigAB, "h2", "k2", At(1)))
		return s
	}

	t.Run("binds the grant to the current hash", func(t *testing.T) {
		s := setup(t)
		d := Decision(audit.KindGrant, name, "h1", At(3))
		p, err := s.SetGrant(ctx, name, grant(), "h1", nil, d)
		if err != nil {
			t.Fatalf("SetGrant: %v", err)
		}
		for where, p := range map[string]*procedures.Procedure{"SetGrant": p, "Get": MustGet(t, s, name)} {
			g := p.Grant
			if g == nil || !g.Enabled || g.GrantedBy != "alice" || g.Reason != "reviewed" || g.CodeHash != "h1" {
				t.Fatalf("%s: grant = %+v", where, g)
			}
			RequireTime(t, where+" GrantedAt", g.GrantedAt, At(3))
		}
		ds := MustDecisions(t, s, audit.DecisionFilter{})
		if len(ds) != 1 || ds[0].ID != d.ID {
			t.Fatalf("decisions = %+v", ds)
		}
	})

	t.Run("changed code is a conflict and writes nothing", func(t *testing.T) {
		s := setup(t)
		_, err := s.SetGrant(ctx, name, grant(), "h2", nil, Decision(audit.KindGrant, name, "h2", At(3)))
		e := RequireCode(t, err, fault.CodeConflict)
		if e.Details["reason"] != audit.ReasonCodeChanged {
			t.Errorf("details = %v, want reason %q", e.Details, audit.ReasonCodeChanged)
		}
		if p := MustGet(t, s, name); p.Grant != nil {
			t.Errorf("grant written: %+v", p.Grant)
		}
		if ds := MustDecisions(t, s, audit.DecisionFilter{}); len(ds) != 0 {
			t.Errorf("decision appended: %+v", ds)
		}
	})

	t.Run("nil revokes", func(t *testing.T) {
		s := setup(t)
		if _, err := s.SetGrant(ctx, name, grant(), "h1", nil, Decision(audit.KindGrant, name, "h1", At(3))); err != nil {
			t.Fatalf("SetGrant: %v", err)
		}
		p, err := s.SetGrant(ctx, name, nil, "h1", nil, Decision(audit.KindRevoke, name, "h1", At(4)))
		if err != nil {
			t.Fatalf("revoke: %v", err)
		}
		if p.Grant != nil || MustGet(t, s, name).Grant != nil {
			t.Fatalf("grant after revoke = %+v", p.Grant)
		}
		ds := MustDecisions(t, s, audit.DecisionFilter{})
		if len(ds) != 2 || ds[0].Kind != audit.KindRevoke {
			t.Fatalf("decisions = %+v", ds)
		}
	})

	t.Run("a grant or revoke prepared under another catalogue writes nothing", func(t *testing.T) {
		s := setup(t)
		// (ADR 0047: a grant prepared from what the service knew is
		// checked in its write.)
		empty, err := s.Catalogue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetGrant(ctx, name, grant(), "h1", empty, Decision(audit.KindGrant, name, "h1", At(2))); err != nil {
			t.Fatalf("SetGrant under the stored (empty) catalogue: %v", err)
		}
		put, err := procedures.NewCatalogue([]procedures.Tool{{Name: sigAB[0], ReadOnly: true}})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.PutCatalogue(ctx, put); err != nil {
			t.Fatal(err)
		}
		for _, g := range []*procedures.Grant{grant(), nil} {
			kind := audit.KindGrant
			if g == nil {
				kind = audit.KindRevoke
			}
			_, err := s.SetGrant(ctx, name, g, "h1", empty, Decision(kind, name, "h1", At(3)))
			if !procedures.IsCatalogueChanged(err) {
				t.Fatalf("%s under a catalogue no longer stored: %v, want catalogue_changed", kind, err)
			}
		}
		if p := MustGet(t, s, name); p.Grant == nil {
			t.Error("the refused revoke removed the grant")
		}
		if ds := MustDecisions(t, s, audit.DecisionFilter{Procedure: name}); len(ds) != 1 {
			t.Errorf("decisions = %+v, want the first grant's alone", ds)
		}
		stored, err := s.Catalogue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetGrant(ctx, name, nil, "h1", stored, Decision(audit.KindRevoke, name, "h1", At(4))); err != nil {
			t.Fatalf("revoke under the stored catalogue: %v", err)
		}
	})

	t.Run("unknown procedure is not found", func(t *testing.T) {
		s := setup(t)
		_, err := s.SetGrant(ctx, "proc__missing", grant(), "h1", nil, Decision(audit.KindGrant, "proc__missing", "h1", At(3)))
		RequireCode(t, err, fault.CodeNotFound)
	})

	t.Run("a decision id holding another record is a conflict and writes nothing", func(t *testing.T) {
		s := setup(t)
		other := Decision(audit.KindInvoke, name, "h1", At(2))
		if err := s.AppendDecision(ctx, other); err != nil {
			t.Fatalf("AppendDecision: %v", err)
		}
		d := Decision(audit.KindGrant, name, "h1", At(3))
		d.ID = other.ID
		_, err := s.SetGrant(ctx, name, grant(), "h1", nil, d)
		RequireCode(t, err, fault.CodeConflict)
		if p := MustGet(t, s, name); p.Grant != nil {
			t.Errorf("grant written: %+v", p.Grant)
		}
		if ds := MustDecisions(t, s, audit.DecisionFilter{Procedure: name}); len(ds) != 1 || ds[0].Kind != audit.KindInvoke {
			t.Errorf("decisions = %+v", ds)
		}
	})

	t.Run("the same grant again (a retried write) is applied once", func(t *testing.T) {
		s := setup(t)
		d := Decision(audit.KindGrant, name, "h1", At(3))
		for range 2 {
			if _, err := s.SetGrant(ctx, name, grant(), "h1", nil, d); err != nil {
				t.Fatalf("SetGrant: %v", err)
			}
		}
		if p := MustGet(t, s, name); p.Grant == nil || !p.Grant.Enabled {
			t.Errorf("grant = %+v", p.Grant)
		}
		if ds := MustDecisions(t, s, audit.DecisionFilter{Procedure: name}); len(ds) != 1 || ds[0].ID != d.ID {
			t.Errorf("decisions = %+v", ds)
		}
	})

	t.Run("invalid decision is rejected", func(t *testing.T) {
		s := setup(t)
		d := Decision(audit.KindGrant, name, "h1", At(3))
		d.Kind = ""
		_, err := s.SetGrant(ctx, name, grant(), "h1", nil, d)
		RequireCode(t, err, fault.CodeInvalid)
		if p := MustGet(t, s, name); p.Grant != nil {
			t.Errorf("grant written: %+v", p.Grant)
		}
	})

	t.Run("grant survives promotion bound to the old hash", func(t *testing.T) {
		s := setup(t)
		if _, err := s.SetGrant(ctx, name, grant(), "h1", nil, Decision(audit.KindGrant, name, "h1", At(3))); err != nil {
			t.Fatalf("SetGrant: %v", err)
		}
		p, err := s.Promote(ctx, name, "h2", Decision(audit.KindPromote, name, "h2", At(4)))
		if err != nil {
			t.Fatalf("Promote: %v", err)
		}
		if p.Grant == nil || p.Grant.CodeHash != "h1" || p.CodeHash != "h2" {
			t.Fatalf("after promote: current %s grant %+v", p.CodeHash, p.Grant)
		}
		_, err = s.SetGrant(ctx, name, grant(), "h1", nil, Decision(audit.KindGrant, name, "h1", At(5)))
		RequireCode(t, err, fault.CodeConflict)
	})
}
