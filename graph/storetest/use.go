package storetest

import (
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
)

func use(name, hash, key string, replay bool, at time.Time) procedures.UseInput {
	return procedures.UseInput{Name: name, CodeHash: hash, UsageKey: key, Replay: replay, At: at}
}

func testRecordUse(t *testing.T, newStore NewStore) {
	name := NameOf(sigAB...)

	t.Run("unknown procedure or version is not found", func(t *testing.T) {
		s := newStore(t)
		_, err := s.RecordUse(ctx, use("proc__missing", "", "k1", true, At(0)))
		RequireCode(t, err, fault.CodeNotFound)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		_, err = s.RecordUse(ctx, use(name, "nope", "k2", true, At(1)))
		RequireCode(t, err, fault.CodeNotFound)
		if p := MustGet(t, s, name); p.Frequency != 1 || p.UseCount != 0 {
			t.Errorf("failed use changed the procedure: frequency %d use count %d", p.Frequency, p.UseCount)
		}
	})

	t.Run("invalid input is rejected", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		for _, in := range []procedures.UseInput{
			use("", "", "k2", true, At(1)),
			use(name, "", "", true, At(1)),
			use(name, "", "k2", true, time.Time{}),
		} {
			_, err := s.RecordUse(ctx, in)
			RequireCode(t, err, fault.CodeInvalid)
		}
	})

	t.Run("replay increments use count and sets last used", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		res := MustRecordUse(t, s, use(name, "", "k2", true, At(5)))
		p := res.Procedure
		if !res.Counted || p.UseCount != 1 || p.Frequency != 2 || p.LastUsedAt == nil {
			t.Fatalf("after replay: Counted %v use count %d frequency %d last used %v; want true 1 2 set", res.Counted, p.UseCount, p.Frequency, p.LastUsedAt)
		}
		RequireTime(t, "LastUsedAt", *p.LastUsedAt, At(5))
		RequireTime(t, "UpdatedAt", p.UpdatedAt, At(5))
		p = MustRecordUse(t, s, use(name, "", "k2", true, At(9))).Procedure
		if p.UseCount != 2 || p.Frequency != 2 {
			t.Fatalf("after second replay with the same key: use count %d frequency %d, want 2 2", p.UseCount, p.Frequency)
		}
		RequireTime(t, "LastUsedAt", *MustGet(t, s, name).LastUsedAt, At(9))
		// A replay that finishes after a later one does not move it back.
		MustRecordUse(t, s, use(name, "", "k3", true, At(7)))
		p = MustGet(t, s, name)
		RequireTime(t, "LastUsedAt after an earlier replay", *p.LastUsedAt, At(9))
		if p.UseCount != 3 {
			t.Fatalf("use count %d, want 3", p.UseCount)
		}
	})

	t.Run("use without replay counts frequency only", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		p := MustRecordUse(t, s, use(name, "", "k2", false, At(5))).Procedure
		if p.UseCount != 0 || p.LastUsedAt != nil || p.Frequency != 2 {
			t.Fatalf("use count %d last used %v frequency %d, want 0 nil 2", p.UseCount, p.LastUsedAt, p.Frequency)
		}
	})

	t.Run("usage key counts once", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		steps := []struct {
			key  string
			want bool
		}{{"k1", false}, {"k2", true}, {"k2", false}, {"k3", true}}
		for i, st := range steps {
			res := MustRecordUse(t, s, use(name, "", st.key, true, At(i+1)))
			if res.Counted != st.want {
				t.Errorf("step %d key %s: Counted %v, want %v", i, st.key, res.Counted, st.want)
			}
		}
		if p := MustGet(t, s, name); p.Frequency != 3 {
			t.Errorf("frequency = %d, want 3", p.Frequency)
		}
		if v := MustVersion(t, s, name, "h1"); v.Frequency != 3 {
			t.Errorf("version frequency = %d, want 3", v.Frequency)
		}
	})

	t.Run("cause edge is linked and counted", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		for i, st := range []struct {
			key  string
			want int64
		}{{"k1", 1}, {"k1", 1}, {"k2", 2}} {
			in := use(name, "", st.key, false, At(i+1))
			in.Cause = "c1"
			p := MustRecordUse(t, s, in).Procedure
			if f, ok := causeLink(p, "c1"); !ok || f != st.want {
				t.Errorf("step %d: edge frequency %d (linked %v), want %d", i, f, ok, st.want)
			}
		}
		if c, ps := MustCause(t, s, "c1"); c.Frequency != 2 || len(ps) != 1 || ps[0].Name != name {
			t.Errorf("cause %+v procedures %+v", c, ps)
		}
	})

	t.Run("code hash counts on that version", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		MustCapture(t, s, In(sigAB, "h2", "k2", At(1)))
		res := MustRecordUse(t, s, use(name, "h2", "k3", true, At(2)))
		if res.Procedure.CodeHash != "h1" || res.Procedure.Frequency != 3 {
			t.Fatalf("current %s frequency %d, want h1 3", res.Procedure.CodeHash, res.Procedure.Frequency)
		}
		if v := MustVersion(t, s, name, "h2"); v.Frequency != 2 {
			t.Errorf("h2 frequency = %d, want 2", v.Frequency)
		}
		if v := MustVersion(t, s, name, "h1"); v.Frequency != 1 {
			t.Errorf("h1 frequency = %d, want 1", v.Frequency)
		}
		MustRecordUse(t, s, use(name, "", "k4", true, At(3)))
		if v := MustVersion(t, s, name, "h1"); v.Frequency != 2 {
			t.Errorf("h1 frequency after a use of the current version = %d, want 2", v.Frequency)
		}
	})
}

func testGet(t *testing.T, newStore NewStore) {
	t.Run("unknown procedure is not found", func(t *testing.T) {
		s := newStore(t)
		_, err := s.Get(ctx, "proc__missing")
		RequireCode(t, err, fault.CodeNotFound)
	})

	t.Run("returns current version causes and grant", func(t *testing.T) {
		s := newStore(t)
		name := NameOf(sigAB...)
		MustCapture(t, s, WithCause(In(sigAB, "h1", "k1", At(0)), "c_b", ""))
		MustCapture(t, s, WithCause(In(sigAB, "h2", "k2", At(1)), "c_a", ""))
		MustCapture(t, s, WithCause(In(sigAB, "h2", "k3", At(2)), "c_c", ""))
		MustCapture(t, s, WithCause(In(sigAB, "h2", "k4", At(3)), "c_c", ""))
		g := &procedures.Grant{Enabled: true, GrantedBy: "op", GrantedAt: At(4), Reason: "ok"}
		if _, err := s.SetGrant(ctx, name, g, "h1", nil, Decision(audit.KindGrant, name, "h1", At(4))); err != nil {
			t.Fatalf("SetGrant: %v", err)
		}
		p := MustGet(t, s, name)
		if p.CodeHash != "h1" || p.Grant == nil || p.Grant.CodeHash != "h1" {
			t.Fatalf("current %s grant %+v", p.CodeHash, p.Grant)
		}
		requireEqual(t, "causes", p.Causes, []procedures.CauseLink{{Name: "c_c", Frequency: 2}, {Name: "c_a", Frequency: 1}, {Name: "c_b", Frequency: 1}})
	})

	t.Run("GetMany returns the existing procedures by name", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		MustCapture(t, s, In([]string{"tool_c"}, "h2", "k1", At(0)))
		got, err := s.GetMany(ctx, []string{NameOf(sigAB...), "proc__missing", NameOf("tool_c"), NameOf(sigAB...)})
		if err != nil {
			t.Fatalf("GetMany: %v", err)
		}
		if len(got) != 2 || got[NameOf(sigAB...)] == nil || got[NameOf("tool_c")].CodeHash != "h2" {
			t.Fatalf("GetMany = %v", got)
		}
		got, err = s.GetMany(ctx, nil)
		if err != nil || len(got) != 0 {
			t.Fatalf("GetMany(nil) = %v, %v", got, err)
		}
	})

	t.Run("ReferencedProcedures returns referenced stored procedures", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, In([]string{"proc__b__c", "proc__never_stored", "tool_a"}, "h1", "k1", At(0)))
		MustCapture(t, s, In([]string{"proc__b__c", "tool_x"}, "h1", "k1", At(0)))
		MustCapture(t, s, In([]string{"b", "c"}, "h2", "k1", At(0)))
		MustCapture(t, s, In([]string{"d", "e"}, "h3", "k1", At(0)))
		ps, err := s.ReferencedProcedures(ctx)
		if err != nil {
			t.Fatalf("ReferencedProcedures: %v", err)
		}
		requireEqual(t, "referenced", names(ps), []string{"proc__b__c"})
		if len(ps) == 1 {
			requireEqual(t, "signature", ps[0].Signature, []string{"b", "c"})
		}
	})
}
