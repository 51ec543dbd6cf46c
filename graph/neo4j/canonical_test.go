package neo4j

import (
	"context"
	"testing"

	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
)

// TestCanonicalBackfill: versions stored without a canonical hash get the
// hash of their code when a store is opened, in batches; a code that does
// not analyse is left without one and not read again; a capture of the
// program then counts on the earliest captured version of it.
func TestCanonicalBackfill(t *testing.T) {
	ctx := context.Background()
	s := freshStore(t)
	sig := []string{"t1"}
	name := storetest.NameOf(sig...)
	for _, v := range []struct {
		hash, code string
		at         int
	}{
		{"h_late", "late = tools.t1(x=x)\nreturn late\n", 5},
		{"h_early", "early = tools.t1(x=x)\nreturn early\n", 1},
		{"h_other", "return tools.t1(y=x)\n", 3},
		{"h_broken", "return (\n", 4},
	} {
		in := storetest.In(sig, v.hash, "k-"+v.hash, storetest.At(v.at))
		in.Version.Code, in.Version.Dialect, in.Version.CapturedAt = v.code, "starlark", storetest.At(v.at)
		storetest.MustCapture(t, s, in)
	}
	defer func(b int) { canonicalBatch = b }(canonicalBatch)
	canonicalBatch = 2
	again := openStore(t)
	vs, err := again.Versions(ctx, name)
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
	in := storetest.In(sig, "h_new", "k-new", storetest.At(9))
	in.Version.CanonicalHash = want
	if res := storetest.MustCapture(t, again, in); res.VersionCreated || res.CodeHash != "h_early" {
		t.Fatalf("a capture of the program counted on %q (created %v), want the earliest, h_early", res.CodeHash, res.VersionCreated)
	}
	openStore(t) // again: nothing left to compute, the broken code not read forever
}
