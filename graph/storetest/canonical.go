package storetest

import (
	"testing"

	"github.com/procgraph/procgraph/procedures"
)

// testCanonical: versions are keyed by their canonical hash beside their
// code hash (docs/design.md "The canonical program"): a capture of another
// text of a stored version's program (another code hash, the same
// canonical hash) is a use of the version first captured with it, which
// keeps its code; another canonical hash is another version.
func testCanonical(t *testing.T, newStore NewStore) {
	name := NameOf(sigAB...)
	canon := func(in procedures.CaptureInput, c string) procedures.CaptureInput {
		in.Version.CanonicalHash = c
		in.Version.Code = "code of " + in.Version.CodeHash
		return in
	}

	t.Run("another text of a program is a use of its first version", func(t *testing.T) {
		s := newStore(t)
		first := MustCapture(t, s, canon(In(sigAB, "h1", "k1", At(0)), "c1"))
		if !first.VersionCreated || first.CodeHash != "h1" {
			t.Fatalf("first capture: %+v", first)
		}
		again := MustCapture(t, s, canon(In(sigAB, "h2", "k2", At(1)), "c1"))
		if again.VersionCreated || again.CodeHash != "h1" {
			t.Fatalf("another text of the program: version created %v, counted on %q; want a use of h1", again.VersionCreated, again.CodeHash)
		}
		other := MustCapture(t, s, canon(In(sigAB, "h3", "k3", At(2)), "c2"))
		if !other.VersionCreated || other.CodeHash != "h3" {
			t.Fatalf("another program: %+v", other)
		}
		vs, err := s.Versions(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 2 || vs[0].CodeHash != "h1" || vs[0].Frequency != 2 || vs[0].CanonicalHash != "c1" || vs[1].CodeHash != "h3" {
			t.Fatalf("versions = %+v; want h1 (counted twice, canonical c1) and h3", vs)
		}
		if v := MustVersion(t, s, name, "h1"); v.Code != "code of h1" || v.CanonicalHash != "c1" {
			t.Fatalf("the version keeps the code it was first captured with: %+v", v)
		}
		if p := MustGet(t, s, name); p.Frequency != 3 {
			t.Fatalf("procedure frequency %d, want 3 (three keys)", p.Frequency)
		}
	})

	t.Run("the same code hash is its version whatever the canonical hash", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, canon(In(sigAB, "h1", "k1", At(0)), "c1"))
		res := MustCapture(t, s, canon(In(sigAB, "h1", "k2", At(1)), "c9"))
		if res.VersionCreated || res.CodeHash != "h1" {
			t.Fatalf("the same text: %+v", res)
		}
	})

	t.Run("a version without a canonical hash is matched by code hash only", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		res := MustCapture(t, s, canon(In(sigAB, "h2", "k2", At(1)), "c1"))
		if !res.VersionCreated || res.CodeHash != "h2" {
			t.Fatalf("a new text of a version stored without a canonical hash: %+v", res)
		}
	})
}
