package embedded

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
)

// TestCanonicalBackfill: versions stored without a canonical hash (before
// versions were keyed by it, or from a dump) get the hash of their code
// when the store opens; versions of one program stay apart, and a capture
// of the program counts on the earliest captured of them.
func TestCanonicalBackfill(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "p.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sig := []string{"t1"}
	name := storetest.NameOf(sig...)
	for _, v := range []struct {
		hash, code string
		at         int
	}{
		{"h_late", "late = tools.t1(x=x)\nreturn late\n", 5},
		{"h_early", "early = tools.t1(x=x)\nreturn early\n", 1},
		{"h_other", "return tools.t1(y=x)\n", 3},
	} {
		in := storetest.In(sig, v.hash, "k-"+v.hash, storetest.At(v.at))
		in.Version.Code, in.Version.Dialect, in.Version.CapturedAt = v.code, "starlark", storetest.At(v.at)
		storetest.MustCapture(t, s, in)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(path, Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	vs, err := s.Versions(ctx, name)
	if err != nil || len(vs) != 3 {
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
	if byHash["h_early"] != want || byHash["h_late"] != want || byHash["h_other"] == want || byHash["h_other"] == "" {
		t.Fatalf("canonical hashes after the open: %v, want %s for h_early and h_late", byHash, want)
	}
	in := storetest.In(sig, "h_new", "k-new", storetest.At(9))
	in.Version.CanonicalHash = want
	if res := storetest.MustCapture(t, s, in); res.VersionCreated || res.CodeHash != "h_early" {
		t.Fatalf("a capture of the program counted on %q (created %v), want the earliest, h_early", res.CodeHash, res.VersionCreated)
	}
}
