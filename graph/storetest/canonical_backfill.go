package storetest

import (
	"testing"

	"github.com/procgraph/procgraph/procedures"
)

// canonicalSig is the signature of the versions CaptureWithoutCanonical
// stores.
var canonicalSig = []string{"t1"}

// CaptureWithoutCanonical stores, as a store written before versions kept
// their canonical hash would hold them, four versions of one procedure:
// two texts of one program captured at 5 and 1 (h_late, h_early), another
// program (h_other) and code that does not analyse (h_broken).
func CaptureWithoutCanonical(t *testing.T, s procedures.Store) {
	t.Helper()
	for _, v := range []struct {
		hash, code string
		at         int
	}{
		{"h_late", "late = tools.t1(x=x)\nreturn late\n", 5},
		{"h_early", "early = tools.t1(x=x)\nreturn early\n", 1},
		{"h_other", "return tools.t1(y=x)\n", 3},
		{"h_broken", "return (\n", 4},
	} {
		in := In(canonicalSig, v.hash, "k-"+v.hash, At(v.at))
		in.Version.Code, in.Version.Dialect, in.Version.CapturedAt = v.code, "starlark", At(v.at)
		MustCapture(t, s, in)
	}
}

// RequireCanonicalBackfill checks a store opened again on what
// CaptureWithoutCanonical stored: h_early and h_late have the hash of
// their one program, h_other another, h_broken none; and a capture of the
// program counts on the earliest captured version of it (h_early).
func RequireCanonicalBackfill(t *testing.T, s procedures.Store) {
	t.Helper()
	name := NameOf(canonicalSig...)
	vs, err := s.Versions(ctx, name)
	if err != nil || len(vs) != 4 {
		t.Fatalf("versions %+v %v", vs, err)
	}
	byHash := map[string]string{}
	for _, v := range vs {
		byHash[v.CodeHash] = v.CanonicalHash
	}
	want, err := procedures.CanonicalHashOf("x1 = tools.t1(x=x)\nreturn x1\n", "starlark", nil)
	if err != nil {
		t.Fatal(err)
	}
	if byHash["h_early"] != want || byHash["h_late"] != want || byHash["h_other"] == want || byHash["h_other"] == "" || byHash["h_broken"] != "" {
		t.Fatalf("canonical hashes after the open: %v, want %s for h_early and h_late, none for h_broken", byHash, want)
	}
	in := In(canonicalSig, "h_new", "k-new", At(9))
	in.Version.CanonicalHash = want
	if res := MustCapture(t, s, in); res.VersionCreated || res.CodeHash != "h_early" {
		t.Fatalf("a capture of the program counted on %q (created %v), want the earliest, h_early", res.CodeHash, res.VersionCreated)
	}
}
