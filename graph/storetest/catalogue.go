package storetest

import (
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
)

func testCatalogue(t *testing.T, newStore NewStore) {
	t.Run("empty when none was put", func(t *testing.T) {
		s := newStore(t)
		c, err := s.Catalogue(ctx)
		if err != nil {
			t.Fatalf("Catalogue: %v", err)
		}
		empty, _ := procedures.NewCatalogue(nil)
		if c == nil || len(c.Tools) != 0 || c.Revision != empty.Revision {
			t.Fatalf("Catalogue = %+v, want no tools and revision %s", c, empty.Revision)
		}
	})

	t.Run("put replaces and round trips", func(t *testing.T) {
		s := newStore(t)
		first, err := procedures.NewCatalogue([]procedures.Tool{{Name: "old_tool", ReadOnly: true}})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.PutCatalogue(ctx, first); err != nil {
			t.Fatalf("PutCatalogue: %v", err)
		}
		tools := []procedures.Tool{
			{Name: "search_jobs", Description: "Search jobs ü", ReadOnly: true, ExternalAccess: true,
				InputSchema: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string", "maxLength": 200}}, "required": []any{"q"}}},
			{Name: "kill_job", Description: "Kill", ReadOnly: false, Server: "jobs.v2", UpstreamName: "kill-job ü"},
		}
		// As a server listed it: a refresh follows it (procedures.Tool.Listed).
		tools[1].Listed = procedures.ListedHash(tools[1])
		second, err := procedures.NewCatalogue(tools)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.PutCatalogue(ctx, second); err != nil {
			t.Fatalf("PutCatalogue: %v", err)
		}
		got, err := s.Catalogue(ctx)
		if err != nil {
			t.Fatalf("Catalogue: %v", err)
		}
		if got.Revision != second.Revision {
			t.Errorf("revision = %s, want %s", got.Revision, second.Revision)
		}
		if len(got.Tools) != 2 {
			t.Fatalf("tools = %+v", got.Tools)
		}
		for i, want := range second.Tools {
			g := got.Tools[i]
			if g.Name != want.Name || g.Description != want.Description || g.ReadOnly != want.ReadOnly || g.ExternalAccess != want.ExternalAccess ||
				g.Server != want.Server || g.UpstreamName != want.UpstreamName || g.Listed != want.Listed || g.FollowsServer() != want.FollowsServer() {
				t.Errorf("tool %d = %+v, want %+v", i, g, want)
			}
			requireEqual(t, want.Name+" input schema", any(g.InputSchema), JSONValue(t, want.InputSchema))
		}
		if _, ok := got.Tool("old_tool"); ok {
			t.Error("old tool survived the replacement")
		}
		if tl, ok := got.Tool("search_jobs"); !ok || !tl.ReadOnly {
			t.Error("Tool lookup fails on the stored catalogue")
		}
		requireEqual(t, "read-only tools", got.ReadOnlyTools(), []string{"search_jobs"})

		// A route taken away is gone, not kept from the last put.
		third, err := procedures.NewCatalogue([]procedures.Tool{{Name: "kill_job", Description: "Kill"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.PutCatalogue(ctx, third); err != nil {
			t.Fatalf("PutCatalogue: %v", err)
		}
		got, err = s.Catalogue(ctx)
		if err != nil {
			t.Fatalf("Catalogue: %v", err)
		}
		if len(got.Tools) != 1 || got.Tools[0].Server != "" || got.Tools[0].UpstreamName != "" || got.Tools[0].Listed != "" || got.Revision != third.Revision {
			t.Fatalf("after a put without the route: %+v (revision %s, want %s)", got.Tools, got.Revision, third.Revision)
		}
	})

	t.Run("a capture prepared under another catalogue writes nothing", func(t *testing.T) {
		s := newStore(t)
		empty, err := s.Catalogue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		under := func(in procedures.CaptureInput, cat *procedures.Catalogue) procedures.CaptureInput {
			in.Catalogue = cat
			return in
		}
		// Under the stored catalogue (none was put: the empty one).
		MustCapture(t, s, under(In(sigAB, "h1", "k1", At(0)), empty))
		put, err := procedures.NewCatalogue([]procedures.Tool{{Name: "tool_a", ReadOnly: true}, {Name: "tool_b", ReadOnly: true}})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.PutCatalogue(ctx, put); err != nil {
			t.Fatal(err)
		}
		stale := []struct {
			what string
			in   procedures.CaptureInput
		}{
			{"an existing procedure", In(sigAB, "h2", "k2", At(1))},
			{"a new procedure", In([]string{"c"}, "h3", "k3", At(2))},
			{"a new procedure naming another", In([]string{"c", NameOf(sigAB...)}, "h4", "k4", At(3))},
		}
		for _, c := range stale {
			_, err := s.Capture(ctx, under(c.in, empty))
			if e := RequireCode(t, err, fault.CodeConflict); e.Details["reason"] != audit.ReasonCatalogueChanged || !procedures.IsCatalogueChanged(err) {
				t.Fatalf("%s under the replaced catalogue: details %v, want reason %s", c.what, e.Details, audit.ReasonCatalogueChanged)
			}
		}
		p := MustGet(t, s, NameOf(sigAB...))
		if p.Frequency != 1 {
			t.Errorf("frequency %d after refused captures, want 1", p.Frequency)
		}
		if vs, err := s.Versions(ctx, p.Name); err != nil || len(vs) != 1 {
			t.Errorf("Versions = %+v, %v; want h1 only", vs, err)
		}
		for _, name := range []string{NameOf("c"), NameOf("c", NameOf(sigAB...))} {
			if _, err := s.Get(ctx, name); fault.ErrorCode(err) != fault.CodeNotFound {
				t.Errorf("Get(%s) = %v after a refused capture, want not found", name, err)
			}
		}
		// Under the stored one, each is written.
		for _, c := range stale {
			MustCapture(t, s, under(c.in, put))
		}
		if p := MustGet(t, s, NameOf(sigAB...)); p.Frequency != 2 {
			t.Errorf("frequency %d, want 2", p.Frequency)
		}
	})

	t.Run("nil catalogue is invalid", func(t *testing.T) {
		s := newStore(t)
		RequireCode(t, s.PutCatalogue(ctx, nil), fault.CodeInvalid)
	})
}

func testCauses(t *testing.T, newStore NewStore) {
	setup := func(t *testing.T) procedures.Store {
		s := newStore(t)
		sigC := []string{"tool_c", "tool_d"}
		sigE := []string{"tool_e", "tool_f"}
		for i, c := range []struct {
			sig   []string
			key   string
			cause string
			desc  string
		}{
			{sigAB, "k1", "disk full", "the disk is full"},
			{sigAB, "k2", "disk full", ""},
			{sigC, "k1", "disk full", "other"},
			{sigE, "k1", "disk full", ""},
			{sigC, "k2", "bad input", ""},
		} {
			MustCapture(t, s, WithCause(In(c.sig, "h", c.key, At(i)), c.cause, c.desc))
		}
		return s
	}

	t.Run("Causes counts procedures and sums frequencies by name", func(t *testing.T) {
		s := setup(t)
		cs, err := s.Causes(ctx)
		if err != nil {
			t.Fatalf("Causes: %v", err)
		}
		requireEqual(t, "causes", cs, []procedures.Cause{
			{Name: "bad input", Procedures: 1, Frequency: 1},
			{Name: "disk full", Description: "the disk is full", Procedures: 3, Frequency: 4},
		})
	})

	t.Run("Cause orders procedures by edge frequency then name", func(t *testing.T) {
		s := setup(t)
		c, ps := MustCause(t, s, "disk full")
		if c.Name != "disk full" || c.Description != "the disk is full" || c.Procedures != 3 || c.Frequency != 4 {
			t.Errorf("cause = %+v", c)
		}
		requireEqual(t, "procedures", ps, []procedures.CauseProcedure{
			{Name: NameOf(sigAB...), Frequency: 2},
			{Name: NameOf("tool_c", "tool_d"), Frequency: 1},
			{Name: NameOf("tool_e", "tool_f"), Frequency: 1},
		})
	})

	t.Run("unknown cause is not found", func(t *testing.T) {
		s := newStore(t)
		_, _, err := s.Cause(ctx, "nope")
		RequireCode(t, err, fault.CodeNotFound)
		if cs, err := s.Causes(ctx); err != nil || len(cs) != 0 {
			t.Errorf("Causes on an empty store = %v, %v", cs, err)
		}
	})
}

func testLifecycle(t *testing.T, newStore NewStore) {
	t.Run("Ping answers", func(t *testing.T) {
		s := newStore(t)
		if err := s.Ping(ctx); err != nil {
			t.Fatalf("Ping: %v", err)
		}
	})

	t.Run("closed store is unavailable", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		if err := s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		RequireCode(t, s.Ping(ctx), fault.CodeUnavailable)
		_, err := s.Get(ctx, NameOf(sigAB...))
		RequireCode(t, err, fault.CodeUnavailable)
		_, err = s.Capture(ctx, In(sigAB, "h1", "k2", At(1)))
		RequireCode(t, err, fault.CodeUnavailable)
		_ = s.Close() // a second Close must not panic
	})
}
